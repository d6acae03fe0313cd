import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterEach, describe, expect, it } from 'vitest'
import { defineTool } from '@dogu/core'
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

/**
 * With DOGU_SCREENSHOTS=1, the pictures of the edit form in Koishi's console (Chinese, and `.en-US`) are taken from this run:
 * `DOGU_SCREENSHOTS=1 yarn vitest run packages/koishi/tests/console-edit-browser.spec.ts`.
 */
async function screenshot(page: Page, name: string) {
  if (process.env.DOGU_SCREENSHOTS === '1') await page.screenshot({ path: join(__dirname, `../../../docs/images/${name}.png`) })
}

const TOKEN = 'tok-koishi-1a2b3c'

/** The input of a form field, found by the key the form shows. */
const field = (page: Page, key: string) =>
  page.locator('.dogu-koishi .k-schema-item', { has: page.locator('h3', { hasText: new RegExp(`^${key}$`) }) }).locator('input').first()

/**
 * Koishi's console on the Dogu page's Approvals view, with one more tool, `tail` (write:
 * asked), that reads `limit` lines of `path` with a secret `token`; alice's call to it waits.
 */
async function asked(args: { path: string; limit: number; token?: string }) {
  t = await consoleApp()
  const runs: unknown[] = []
  t.app.plugin({
    name: 'edit-tools',
    inject: ['tools'],
    apply(ctx: Context) {
      ctx.tools.define(defineTool({
        name: 'tail',
        description: 'The last lines of a file',
        args: Schema.object({
          path: Schema.string().required().description('The file'),
          limit: Schema.natural().min(1).max(100).default(10).description('How many lines'),
          token: Schema.string().role('secret').description('Access token'),
        }),
        traits: { effect: 'write' },
        run: (args: { path: string; limit: number }) => {
          runs.push(args)
          return `${args.limit} lines of ${args.path}`
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
  const result = t.app.tools.execute([{ id: 'call-1', name: 'tail', arguments: args }], { session: t.session('alice') }).then(([r]) => r)
  const question = await t.outbox.next()
  expect(question.text).toContain('tail(')
  await expect.poll(() => page!.textContent('[data-test=approvals-count]')).toBe('1')
  await page.click('[data-test=tab-approvals]')
  const card = page.locator('.dogu-koishi [data-test=approval-tail]')
  await card.waitFor()
  return { page, card, result, runs, errors }
}

describe('editing a call before approving it on the Dogu page in Koishi\'s console, in Chromium', () => {
  it('edits limit in the form, approves the edit, and the tool runs with it; the chat question closes', async () => {
    const { page, card, result, runs, errors } = await asked({ path: '/var/log/app.log', limit: 50, token: TOKEN })
    await card.locator('[data-test=edit]').click()
    const editor = card.locator('[data-test=edit-approval]')
    await editor.waitFor()
    expect(await field(page, 'limit').inputValue()).toBe('50')
    expect(await field(page, 'token').inputValue()).toBe('••••')
    expect(await page.content()).not.toContain(TOKEN)
    await field(page, 'limit').fill('5')
    await expect.poll(() => editor.locator('[data-test=edit-change]').allInnerTexts()).toEqual(['$.limit: 50 → 5'])
    // Koishi's console is in Chinese unless its locale setting says otherwise; the page follows it.
    expect(await editor.locator('[data-test=edit-allow-once]').textContent()).toBe('批准修改，一次')
    await screenshot(page, 'koishi-console-approval-edit')
    // The console set to English (its own language setting): the same question, edited there.
    const english = await browser.context.newPage()
    try {
      await english.addInitScript(() => localStorage.setItem('koishi.console.config', JSON.stringify({ ...JSON.parse(localStorage.getItem('koishi.console.config') ?? '{}'), locale: 'en-US' })))
      await english.goto(`${t!.base}/dogu`)
      await english.click('.dogu-koishi [data-test=tab-approvals]')
      const card = english.locator('.dogu-koishi [data-test=approval-tail]')
      await card.locator('[data-test=edit]').click()
      await field(english, 'limit').fill('5')
      expect(await card.locator('[data-test=edit-allow-once]').textContent()).toBe('Approve edited, once')
      await expect.poll(() => card.locator('[data-test=edit-change]').allInnerTexts()).toEqual(['$.limit: 50 → 5'])
      await screenshot(english, 'koishi-console-approval-edit.en-US')
    } finally {
      // The setting is the origin's: back to Chinese for the page this test goes on with.
      await english.evaluate(() => localStorage.setItem('koishi.console.config', JSON.stringify({ ...JSON.parse(localStorage.getItem('koishi.console.config') ?? '{}'), locale: 'zh-CN' })))
      await english.close()
    }
    await editor.locator('[data-test=edit-allow-once]').click()
    await page.waitForSelector('[data-test=approvals-empty]')
    const done = await result
    expect(done.status).toBe('ok')
    expect(done.content).toMatch(/^A person changed your arguments/)
    expect(done.content).toContain('5 lines of /var/log/app.log')
    expect(runs).toEqual([{ path: '/var/log/app.log', limit: 5, token: TOKEN }])
    // Closed in the chat: alice's "y" is no answer any more, it goes on to the bot.
    expect(await t!.client('alice').receive('y')).toEqual([])
    expect(errors).toEqual([])
  })

  it('shows a refused edit inline, keeps the question, and approves it once fixed', async () => {
    const { page, card, result, runs } = await asked({ path: '/var/log/app.log', limit: 50 })
    await card.locator('[data-test=edit]').click()
    const editor = card.locator('[data-test=edit-approval]')
    await field(page, 'limit').fill('500')
    await editor.locator('[data-test=edit-allow-once]').click()
    // Why, in the console's language: the core's words for the problem at its path.
    await expect.poll(() => editor.locator('[data-test=edit-error]').innerText()).toMatch(/^修改后的调用被拒绝，请求仍在等待：\s+参数无效：\n- \$\.limit：.*500/)
    expect(await editor.locator('[data-test=edit-error]').innerText()).not.toContain('expected')
    await page.waitForTimeout(1_300)
    expect(await card.isVisible()).toBe(true)
    expect(await field(page, 'limit').inputValue()).toBe('500')
    expect(runs).toEqual([])
    await field(page, 'limit').fill('20')
    await editor.locator('[data-test=edit-allow-once]').click()
    await page.waitForSelector('[data-test=approvals-empty]')
    expect((await result).content).toContain('$.limit: 50 → 20')
    expect(runs).toEqual([{ path: '/var/log/app.log', limit: 20 }])
  })
})
