// The Dogu page in Koishi's console in each of its languages, in Chromium, logged in with
// @koishijs/plugin-auth: the form's refusal only once run, durations in the chat's words,
// dates in the console's locale, the mode names, and a console answer's approver named
// console:admin on the page, in the chat's closing notice and in dogu.audit.
import { join } from 'node:path'
import { defineTool } from '@dogu/core'
import { type Context, Schema } from 'koishi'
import type { Page } from 'playwright-core'
import { afterEach, describe, expect, it } from 'vitest'
import { chromiumForFile } from '../../../test-support/chromium'
import { consoleApp, logIn } from './console-app'

const browser = chromiumForFile()
let t: Awaited<ReturnType<typeof consoleApp>> | undefined
let page: Page | undefined

afterEach(async () => {
  await page?.close()
  page = undefined
  await t?.dispose()
  t = undefined
})

const WORDS = {
  'zh-CN': {
    refuses: '表单拒绝了这些值：',
    issue: '$.text：缺少必填的属性',
    ok: '成功',
    ms: /^\d+ 毫秒$/,
    modes: ['默认', '只读', '接受编辑', '信任'],
    trust: '信任',
    date: /^\d{4}\/\d{1,2}\/\d{1,2} \d{2}:\d{2}:\d{2}$/,
    background: '转入后台',
    always: '总是',
    answered: 'console:admin 允许 · 通过控制台 · 仅此一次',
    timing: /^运行 \d+ 毫秒 · 等待 (\d+ 毫秒|\d+(\.\d)? 秒)$/,
  },
  'en-US': {
    refuses: 'The form refuses these values:',
    issue: '$.text: missing required property',
    ok: 'ok',
    ms: /^\d+ ms$/,
    modes: ['default', 'read-only', 'accept edits', 'trust'],
    trust: 'trust',
    date: /^\d{1,2}\/\d{1,2}\/\d{2}, \d{1,2}:\d{2}:\d{2}\s[AP]M$/,
    background: 'moved to the background',
    always: 'always',
    answered: 'allow by console:admin · via console · once',
    timing: /^ran \d+ ms · waited (\d+ ms|\d+(\.\d)? s)$/,
  },
} as const

/**
 * With DOGU_SCREENSHOTS=1, the pictures of the page's views in docs/koishi.md are taken from
 * these runs, `koishi-console-<view>.png` in Chinese and `.en-US.png` in English:
 * `DOGU_SCREENSHOTS=1 yarn vitest run packages/koishi/tests/console-locale-browser.spec.ts`.
 */
async function screenshot(page: Page, view: string, locale: string) {
  if (process.env.DOGU_SCREENSHOTS !== '1') return
  // Without plugin-auth's greeting toast, which would cover the page's header.
  await page.addStyleTag({ content: '.el-message { display: none !important; }' })
  await page.screenshot({ path: join(__dirname, `../../../docs/images/koishi-console-${view}${locale === 'zh-CN' ? '' : `.${locale}`}.png`) })
}

/** A tool that moves to the background at once and runs until the app goes. */
function backgroundTool(ctx: Context) {
  ctx.tools.define(defineTool({
    name: 'reindex',
    description: 'Rebuild the search index (slow: continues in the background)',
    args: Schema.object({}),
    traits: { effect: 'read', timeout: 1 },
    run: (_args: object, call) => new Promise<string>((_resolve, reject) => call.signal.addEventListener('abort', () => reject(call.signal.reason), { once: true })),
  }))
}

/** The input of a form field, found by the key the form shows. */
const field = (page: Page, key: string) =>
  page.locator('.k-schema-item', { has: page.locator('h3', { hasText: new RegExp(`^${key}$`) }) }).locator('input').first()

/** The console's language setting, as its settings page stores it (it reads it at load). */
async function useLocale(page: Page, locale: string) {
  await page.addInitScript((locale) => {
    const key = 'koishi.console.config'
    const config = JSON.parse(localStorage.getItem(key) ?? '{}')
    localStorage.setItem(key, JSON.stringify({ theme: { mode: 'auto', dark: 'default-dark', light: 'default-light' }, ...config, locale }))
  }, locale)
}

for (const locale of ['zh-CN', 'en-US'] as const) {
  const words = WORDS[locale]
  describe(`the Dogu page in Koishi's console in ${locale}`, () => {
    it('words the form, durations, dates, tasks, grants and modes in the console\'s language, and names the approver console:admin', async () => {
      t = await consoleApp({ auth: true, audit: true })
      t.app.plugin({ name: 'background-tool', inject: ['tools'], apply: backgroundTool })
      await t.settle()
      page = await browser.context.newPage()
      await useLocale(page, locale)
      await logIn(page, t.base)
      await page.goto(`${t.base}/dogu`)
      await page.waitForSelector('.dogu-koishi [data-test=tool-echo]')

      // Untouched, the form refuses nothing; Run lists what it refuses and sends nothing.
      await page.click('[data-test=tool-echo]')
      await page.waitForSelector('[data-test=args-form]')
      expect(await page.locator('[data-test=form-error]').count()).toBe(0)
      await page.click('[data-test=run]')
      await expect.poll(() => page!.locator('[data-test=form-error] p').textContent()).toBe(words.refuses)
      expect(await page.locator('[data-test=form-issue]').allInnerTexts()).toEqual([words.issue])
      expect(await page.locator('[data-test=result]').count()).toBe(0)
      await screenshot(page, 'form-errors', locale)
      await field(page, 'text').fill('hi')
      await page.click('[data-test=run]')
      await expect.poll(() => page!.textContent('[data-test=result-status]')).toBe(words.ok)
      expect(await page.textContent('[data-test=result-duration]')).toMatch(words.ms)
      await screenshot(page, 'tools', locale)

      // A call that moves to the background: the Tasks view dates it in the console's locale.
      await page.click('[data-test=tool-reindex]')
      await page.click('[data-test=run]')
      await expect.poll(() => page!.textContent('[data-test=result-status]')).toBe(words.background)
      expect(await page.textContent('[data-test=result-task]')).toMatch(/^task_\w+$/)
      await page.click('[data-test=tab-tasks]')
      await expect.poll(() => page!.locator('[data-test=task-started]').count()).toBe(1)
      expect(await page.textContent('[data-test=task-started]')).toMatch(words.date)
      await screenshot(page, 'tasks', locale)

      // A chat user's call, approved on the page: the approver is console:admin everywhere.
      const result = t.app.tools.execute([{ id: 'call-1', name: 'deploy', arguments: { env: 'prod' } }], { session: t.session('alice') }).then(([r]) => r)
      await t.outbox.next()
      await page.click('[data-test=tab-approvals]')
      await page.locator('[data-test=approval-deploy]').waitFor()
      await screenshot(page, 'approvals', locale)
      await page.click('[data-test=approval-deploy] [data-test=allow-once]')
      // Gone from the list before the next question comes: a click then answers that one.
      await page.waitForSelector('[data-test=approvals-empty]')
      expect((await result).status).toBe('ok')
      expect((await t.outbox.next()).text).toBe('[1] deploy(env=prod)：已由 console:admin 处理（仅此一次）。')
      // Allowed always this time: a grant, its scope named as the chat names it.
      const again = t.app.tools.execute([{ id: 'call-2', name: 'deploy', arguments: { env: 'staging' } }], { session: t.session('bob') }).then(([r]) => r)
      await t.outbox.next()
      await page.click('[data-test=approval-deploy] [data-test=allow-always]')
      expect((await again).status).toBe('ok')
      await t.outbox.next()
      await page.click('[data-test=tab-grants]')
      await expect.poll(() => page!.locator('[data-test="grant-tool:deploy"] td').nth(2).textContent()).toBe(words.always)
      expect(await page.locator('[data-test="grant-tool:deploy"] td').nth(4).textContent()).toBe('console:admin')
      await screenshot(page, 'grants', locale)
      const [audited] = await t.client('admin').receive('dogu.audit -t deploy')
      expect(audited).toContain('console:admin')
      expect(audited).not.toContain('console:console')

      // The audit rows: the end in the console's locale, the wait in the chat's words, the approver.
      await page.click('[data-test=tab-log]')
      const row = page.locator('[data-test=audit-row][data-tool=deploy]').last()
      await row.waitFor()
      expect(await row.locator('[data-test=audit-time]').innerText()).toMatch(words.date)
      expect(await row.locator('[data-test=audit-answer]').innerText()).toBe(words.answered)
      expect(await row.locator('[data-test=audit-timing]').innerText()).toMatch(words.timing)
      await screenshot(page, 'log', locale)

      // The modes by name.
      await page.click('[data-test=tab-modes]')
      await expect.poll(() => page!.locator('[data-test^=mode-]:not([data-test=mode-session]):not([data-test=mode-current]):not([data-test=mode-hint])').allInnerTexts()).toEqual(words.modes)
      await page.click('[data-test=mode-trust]')
      await expect.poll(() => page!.textContent('[data-test=mode-current]')).toBe(words.trust)
      await screenshot(page, 'modes', locale)
    })
  })
}
