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

// docs/koishi.md's pictures of the page are taken by console-locale-browser.spec.ts, in both languages.

/** The input of a form field, found by the key the form shows. */
const field = (page: Page, key: string) =>
  page.locator('.k-schema-item', { has: page.locator('h3', { hasText: new RegExp(`^${key}$`) }) }).locator('input').first()

/** Koishi's console, opened on the Dogu page. */
async function open() {
  t = await consoleApp()
  page = await browser.context.newPage()
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(error.message))
  await page.goto(`${t.base}/dogu`)
  await page.waitForSelector('.dogu-koishi [data-test=tool-echo]').catch((error) => {
    throw new Error(`the Dogu page did not show its tools (page errors: ${errors.join('; ') || 'none'}): ${error.message}`)
  })
  return page
}

describe('the Dogu page in Koishi\'s console, in Chromium', () => {
  it('picks a tool, fills the generated form, runs it and shows the result', async () => {
    const page = await open()
    await page.click('[data-test=tool-echo]')
    await field(page, 'text').fill('hello')
    await page.fill('[data-test=user-id]', 'guest')
    await page.click('[data-test=run]')
    // The console has no login here: calls carry the page's authority (4), not guest's (0).
    await expect.poll(() => page.textContent('[data-test=result-content]')).toBe('hello (as authority 4)')
    // Koishi's console is in Chinese unless its locale setting says otherwise; the page follows it.
    expect(await page.textContent('[data-test=result-status]')).toBe('成功')
  })

  it('approves a question while a chat user waits; the chat question closes', async () => {
    const page = await open()
    const result = t!.app.tools.execute([{ id: 'call-1', name: 'deploy', arguments: { env: 'prod' } }], { session: t!.session('alice') }).then(([r]) => r)
    const question = await t!.outbox.next()
    expect(question.text).toContain('deploy(env=prod)')
    await expect.poll(() => page.textContent('[data-test=approvals-count]')).toBe('1')
    await page.click('[data-test=tab-approvals]')
    const card = page.locator('[data-test=approval-deploy]')
    expect(await card.textContent()).toContain('deploy(env=prod)')
    await card.locator('[data-test=allow-once]').click()
    await page.waitForSelector('[data-test=approvals-empty]')
    expect((await result).content).toBe('deployed prod')
    // Closed in the chat: alice's "y" is no answer any more, it goes on to the bot.
    expect(await t!.client('alice').receive('y')).toEqual([])
    expect(t!.passed).toEqual(['alice: y'])
  })

  it('shows what the call would do on the approval card: a folded diff, the whole command, markup as text', async () => {
    const page = await open()
    t!.app.plugin({
      name: 'preview-tools',
      inject: ['tools'],
      apply(ctx: Context) {
        ctx.tools.define(defineTool({
          name: 'patch',
          description: 'Apply a patch, showing it first',
          args: Schema.object({ diff: Schema.string(), command: Schema.string() }),
          traits: { effect: 'write' },
          preview: (args: { diff?: string; command?: string }) => args,
          run: () => 'patched',
        }))
      },
    })
    await t!.settle()
    const hostile = '<img src=x onerror="window.__pwned=1">'
    const diff = ['--- a/app.txt', '+++ b/app.txt', '@@ -1,12 +1,12 @@', ...Array.from({ length: 12 }, (_, i) => [`-old ${i + 1}`, `+new ${i + 1}`]).flat(), `+${hostile}`].join('\n')
    const command = `make deploy ${Array.from({ length: 40 }, (_, i) => `FLAG_${i}=on`).join(' ')} TARGET=the-very-end`
    const result = t!.app.tools.execute([{ id: 'call-2', name: 'patch', arguments: { diff, command } }], { session: t!.session('alice') }).then(([r]) => r)
    await t!.outbox.next()
    await expect.poll(() => page.textContent('[data-test=approvals-count]')).toBe('1')
    await page.click('[data-test=tab-approvals]')
    const card = page.locator('.dogu-koishi [data-test=approval-patch]')
    const shown = card.locator('[data-test=preview-diff]')
    expect(await shown.locator('> span').count()).toBe(20)
    expect(await shown.locator('.diff-added').first().textContent()).toBe('+new 1\n')
    expect(await shown.locator('.diff-removed').first().textContent()).toBe('-old 1\n')
    expect(await shown.locator('.diff-added').first().evaluate((element) => getComputedStyle(element).color)).toBe('rgb(17, 99, 41)')
    const expander = card.locator('[data-test=preview-diff-expand]')
    // In the console's language (Chinese by default).
    expect(await expander.textContent()).toBe('显示全部 28 行')
    await expander.click()
    expect(await shown.locator('> span').count()).toBe(28)
    expect(await expander.textContent()).toBe('收起')
    expect(await shown.locator('.diff-added').last().textContent()).toBe(`+${hostile}\n`)
    expect(await card.locator('img').count()).toBe(0)
    expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined()
    expect(await card.locator('[data-test=preview-command]').textContent()).toBe(command)
    expect(await card.locator('[data-test=preview-command]').evaluate((element) => element.scrollWidth <= element.clientWidth)).toBe(true)
    await expander.click()
    expect(await shown.locator('> span').count()).toBe(20)
    await card.locator('[data-test=deny]').click()
    expect((await result).status).toBe('denied')
  })
})
