// The Dogu page in Koishi's console in each of its languages, in Chromium, logged in with
// @koishijs/plugin-auth: the form's refusal only once run, durations in the chat's words,
// dates in the console's locale, the mode names, and a console answer's approver named
// console:admin on the page, in the chat's closing notice and in dogu.audit.
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
    ok: '成功',
    ms: /^\d+ 毫秒$/,
    modes: ['默认', '只读', '接受编辑', '信任'],
    trust: '信任',
    date: /^\d{4}\/\d{1,2}\/\d{1,2} \d{2}:\d{2}:\d{2}$/,
    answered: 'console:admin 允许 · 通过控制台 · 仅此一次',
    timing: /^运行 \d+ 毫秒 · 等待 (\d+ 毫秒|\d+(\.\d)? 秒)$/,
  },
  'en-US': {
    refuses: 'The form refuses these values:',
    ok: 'ok',
    ms: /^\d+ ms$/,
    modes: ['default', 'read only', 'accept edits', 'trust'],
    trust: 'trust',
    date: /^\d{1,2}\/\d{1,2}\/\d{2}, \d{1,2}:\d{2}:\d{2}\s[AP]M$/,
    answered: 'allow by console:admin · via console · once',
    timing: /^ran \d+ ms · waited (\d+ ms|\d+(\.\d)? s)$/,
  },
} as const

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
    it('words the form, durations, dates and modes in the console\'s language, and names the approver console:admin', async () => {
      t = await consoleApp({ auth: true, audit: true })
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
      expect(await page.locator('[data-test=form-issue] code').allInnerTexts()).toEqual(['$.text'])
      expect(await page.locator('[data-test=result]').count()).toBe(0)
      await field(page, 'text').fill('hi')
      await page.click('[data-test=run]')
      await expect.poll(() => page!.textContent('[data-test=result-status]')).toBe(words.ok)
      expect(await page.textContent('[data-test=result-duration]')).toMatch(words.ms)

      // A chat user's call, approved on the page: the approver is console:admin everywhere.
      const result = t.app.tools.execute([{ id: 'call-1', name: 'deploy', arguments: { env: 'prod' } }], { session: t.session('alice') }).then(([r]) => r)
      await t.outbox.next()
      await page.click('[data-test=tab-approvals]')
      await page.click('[data-test=approval-deploy] [data-test=allow-once]')
      expect((await result).status).toBe('ok')
      expect((await t.outbox.next()).text).toBe('[1] deploy(env=prod)：已由 console:admin 处理（仅此一次）。')
      const [audited] = await t.client('admin').receive('dogu.audit -t deploy')
      expect(audited).toContain('console:admin')
      expect(audited).not.toContain('console:console')

      // The audit rows: the end in the console's locale, the wait in the chat's words, the approver.
      await page.click('[data-test=tab-log]')
      const row = page.locator('[data-test=audit-row][data-tool=deploy]')
      await row.waitFor()
      expect(await row.locator('[data-test=audit-time]').innerText()).toMatch(words.date)
      expect(await row.locator('[data-test=audit-answer]').innerText()).toBe(words.answered)
      expect(await row.locator('[data-test=audit-timing]').innerText()).toMatch(words.timing)

      // The modes by name.
      await page.click('[data-test=tab-modes]')
      await expect.poll(() => page!.locator('[data-test^=mode-]:not([data-test=mode-session]):not([data-test=mode-current]):not([data-test=mode-hint])').allInnerTexts()).toEqual(words.modes)
      await page.click('[data-test=mode-trust]')
      await expect.poll(() => page!.textContent('[data-test=mode-current]')).toBe(words.trust)
    })
  })
}
