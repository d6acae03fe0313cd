import { defineTool, type Elicitation } from '@dogu/core'
import type { Context } from 'cordis'
import type { BrowserContext, Page } from 'playwright-core'
import Schema from 'schemastery'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { openBrowser } from './browser'
import { startConsoleApp, until } from './console-app'

// A tool's form (`call.elicit`) on the Approvals view: filled, declined or cancelled.

let browser: Awaited<ReturnType<typeof openBrowser>>
let context: BrowserContext
let app: Awaited<ReturnType<typeof startConsoleApp>> | undefined
let page: Page | undefined

beforeAll(async () => {
  browser = await openBrowser()
  context = browser.context
})

afterAll(async () => {
  await browser?.close()
})

afterEach(async () => {
  await page?.close()
  page = undefined
  await app?.dispose()
  app = undefined
})

/** The input of a form field, found by the key the form shows. */
const field = (page: Page, key: string) =>
  page.locator('.k-schema-item', { has: page.locator('h3', { hasText: new RegExp(`^${key}$`) }) }).locator('input').first()

/**
 * The console with one more tool, `signup` (read: never asked about), that asks for an
 * account's details with `call.elicit`; a call to it waits on the Approvals view.
 */
async function asked() {
  app = await startConsoleApp()
  const answers: Elicitation[] = []
  await app.ctx.plugin({
    name: 'form-tools',
    inject: ['tools'],
    apply(ctx: Context) {
      ctx.tools.define(defineTool({
        name: 'signup',
        description: 'Create an account',
        args: Schema.object({}),
        traits: { effect: 'read' },
        async run(_args, call) {
          const answer = await call.elicit(Schema.object({
            username: Schema.string().required().description('Account name'),
            age: Schema.natural().max(150).description('Age in years'),
            plan: Schema.union(['free', 'pro']).default('free').description('Plan'),
          }), 'Which account should I create?')
          answers.push(answer)
          return answer.action === 'accept' ? `created ${JSON.stringify(answer.value)}` : answer.action
        },
      }))
    },
  })
  const call = app.send('call', { tool: 'signup', args: {}, sessionId: 'chan-1', userId: 'alice' })
  await until(async () => (await app!.send('approvals.list')).body as any[], 'the form')
  page = await context.newPage()
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(error.message))
  await page.goto(app.base)
  await page.click('[data-test=tab-approvals]')
  const card = page.locator('[data-test=form-signup]')
  await card.waitFor()
  return { page, card, call, answers, errors }
}

describe('a tool\'s form on the Approvals view', () => {
  it('shows the tool and its message with the form, not the approval buttons; filled, the tool gets the values', async () => {
    const { page, card, call, answers, errors } = await asked()
    expect(await card.locator('.card-title').innerText()).toBe('Tool signup asks you to fill in a form')
    expect(await card.locator('[data-test=form-message]').innerText()).toBe('Which account should I create?')
    expect(await card.locator('[data-test=allow-once]').count()).toBe(0)
    expect(await card.locator('[data-test=deny]').count()).toBe(0)
    expect(await card.innerText()).not.toMatch(/allow|approv/i)
    await field(page, 'username').fill('bob')
    await field(page, 'age').fill('30')
    // The list is polled every second: what was typed stays.
    await page.waitForTimeout(1_300)
    expect(await field(page, 'username').inputValue()).toBe('bob')
    await card.locator('[data-test=form-send]').click()
    await page.waitForSelector('[data-test=approvals-empty]')
    expect((await call).body.result.content).toBe('created {"username":"bob","age":30,"plan":"free"}')
    expect(answers).toEqual([{ action: 'accept', value: { username: 'bob', age: 30, plan: 'free' }, by: expect.objectContaining({ id: 'webui' }) }])
    expect(errors).toEqual([])
  })

  it('shows why values are refused and keeps the form; fixed, they are sent', async () => {
    const { page, card, call, answers } = await asked()
    await field(page, 'username').fill('bob')
    await field(page, 'age').fill('500')
    await card.locator('[data-test=form-send]').click()
    const refusal = card.locator('[data-test=form-refused]')
    await expect.poll(() => refusal.innerText()).toContain('$.age: expected a number <= 150, got 500')
    expect(await refusal.innerText()).toContain('The form was not sent; it is still waiting:')
    expect((await app!.send('approvals.list')).body).toHaveLength(1)
    expect(answers).toEqual([])
    await field(page, 'age').fill('50')
    await card.locator('[data-test=form-send]').click()
    expect((await call).body.result.content).toBe('created {"username":"bob","age":50,"plan":"free"}')
  })

  it('Decline declines it and Cancel leaves it unanswered: the tool tells them apart', async () => {
    let { card, call, answers } = await asked()
    await card.locator('[data-test=form-decline]').click()
    expect((await call).body.result.content).toBe('decline')
    expect(answers[0]).toMatchObject({ action: 'decline', by: { id: 'webui' } })
    await page!.close()
    await app!.dispose()
    ;({ card, call, answers } = await asked())
    await card.locator('[data-test=form-cancel]').click()
    expect((await call).body.result.content).toBe('cancel')
    expect(answers).toEqual([{ action: 'cancel', reason: expect.any(String) }])
  })

  it('says it in Chinese too', async () => {
    const { page, card, call } = await asked()
    await page.selectOption('[data-test=language]', 'zh-CN')
    await expect.poll(() => card.locator('.card-title').innerText()).toBe('工具 signup 请你填写表单')
    expect(await card.locator('[data-test=form-send]').textContent()).toBe('提交')
    expect(await card.locator('[data-test=form-decline]').textContent()).toBe('拒绝填写')
    expect(await card.locator('[data-test=form-cancel]').textContent()).toBe('取消（不作答）')
    await card.locator('[data-test=form-cancel]').click()
    expect((await call).body.result.content).toBe('cancel')
  })
})
