import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterEach, describe, expect, it } from 'vitest'
import { defineTool, type Elicitation } from '@dogu/core'
import { type Context, Schema } from 'koishi'
import { chromiumForFile } from '../../../test-support/chromium'
import { consoleApp } from './console-app'

const browser = chromiumForFile()
let t: Awaited<ReturnType<typeof consoleApp>> | undefined
let page: Page | undefined

afterEach(async () => {
  await page?.close()
  page = undefined
  await t?.dispose()
  t = undefined
})

/** The input of a form field, found by the key the form shows. */
const field = (page: Page, key: string) =>
  page.locator('.dogu-koishi .k-schema-item', { has: page.locator('h3', { hasText: new RegExp(`^${key}$`) }) }).locator('input').first()

/**
 * Koishi's console on the Dogu page's Approvals view, with one more tool, `signup` (read:
 * never asked about), that asks its caller for an account's details with `call.elicit`;
 * alice's call to it waits, asked in the chat and on the page.
 */
async function asked() {
  t = await consoleApp()
  const answers: Elicitation[] = []
  t.app.plugin({
    name: 'form-tools',
    inject: ['tools'],
    apply(ctx: Context) {
      ctx.tools.define(defineTool({
        name: 'signup',
        description: 'Create an account',
        args: Schema.object({}),
        traits: { effect: 'read' },
        async run(_args: object, call) {
          const answer = await call.elicit(Schema.object({
            username: Schema.string().required().description('Account name'),
            age: Schema.natural().max(150).description('Age in years'),
          }), 'Which account should I create?')
          answers.push(answer)
          return answer.action === 'accept' ? `created ${JSON.stringify(answer.value)}` : answer.action
        },
      }))
    },
  })
  await t.settle()
  page = await browser.context.newPage()
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(error.message))
  await page.goto(`${t.base}/dogu`)
  await page.waitForSelector('.dogu-koishi [data-test=tool-echo]').catch((error) => {
    throw new Error(`the Dogu page did not show its tools (page errors: ${errors.join('; ') || 'none'}): ${error.message}`)
  })
  const result = t.app.tools.execute([{ id: 'call-1', name: 'signup', arguments: {} }], { session: t.session('alice') }).then(([r]) => r)
  expect((await t.outbox.next()).text).toContain('[1] 工具 signup 请你填写：Which account should I create?')
  await expect.poll(() => page!.textContent('[data-test=approvals-count]')).toBe('1')
  await page.click('[data-test=tab-approvals]')
  const card = page.locator('.dogu-koishi [data-test=form-signup]')
  await card.waitFor()
  return { page, card, result, answers, errors }
}

describe('a tool\'s form on the Dogu page in Koishi\'s console, in Chromium', () => {
  it('is worded as a form, in the console\'s Chinese; filled there, the tool gets the values and the chat\'s copy closes', async () => {
    const { page, card, result, answers, errors } = await asked()
    expect(await card.locator('.card-title').innerText()).toBe('工具 signup 请你填写表单')
    expect(await card.locator('[data-test=form-message]').innerText()).toBe('Which account should I create?')
    expect(await card.locator('[data-test=allow-once]').count()).toBe(0)
    await field(page, 'username').fill('bob')
    await field(page, 'age').fill('500')
    await card.locator('[data-test=form-send]').click()
    // In the console's Chinese: the form's own check, at its path.
    await expect.poll(() => card.locator('[data-test=form-refused]').innerText()).toContain('$.age：应为不大于 150 的数字，实际是 500')
    expect(await card.locator('[data-test=form-refused]').innerText()).toContain('表单没有提交，仍在等待：')
    expect(answers).toEqual([])
    await field(page, 'age').fill('30')
    await card.locator('[data-test=form-send]').click()
    await page.waitForSelector('[data-test=approvals-empty]')
    expect((await result).content).toBe('created {"username":"bob","age":30}')
    // The console's one operator without a login, named once.
    expect(answers[0]).toMatchObject({ action: 'accept', by: { id: 'console' } })
    expect(answers[0]).not.toHaveProperty('by.platform')
    expect((await t!.outbox.next()).text).toBe('[1] signup 的表单已关闭：已在别处回答，或调用已结束。')
    // Closed in the chat: alice's fill is no answer any more, it goes on to the bot.
    expect(await t!.client('alice').receive('username=late')).toEqual([])
    expect(errors).toEqual([])
  })

  it('拒绝填写 declines it; 取消 leaves it unanswered', async () => {
    let { card, result, answers } = await asked()
    await card.locator('[data-test=form-decline]').click()
    expect((await result).content).toBe('decline')
    expect(answers[0]).toMatchObject({ action: 'decline', by: { id: 'console' } })
    await page!.close()
    await t!.dispose()
    ;({ card, result, answers } = await asked())
    expect(await card.locator('[data-test=form-cancel]').textContent()).toBe('取消（不作答）')
    await card.locator('[data-test=form-cancel]').click()
    expect((await result).content).toBe('cancel')
    expect(answers).toEqual([{ action: 'cancel', reason: expect.any(String) }])
  })
})
