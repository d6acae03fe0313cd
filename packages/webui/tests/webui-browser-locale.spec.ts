// The standalone console in each of its languages, in Chromium: dates in the page's locale,
// durations in the chat's words, mode names, result codes, the form's refusal only once
// edited or run, a background result's task, the audit rows by the end they show.
import type { Page } from 'playwright-core'
import { afterEach, describe, expect, it } from 'vitest'
import { openBrowser } from './browser'
import { startConsoleApp, until } from './console-app'

let app: Awaited<ReturnType<typeof startConsoleApp>> | undefined
let close: (() => Promise<void>) | undefined

afterEach(async () => {
  await close?.()
  close = undefined
  await app?.dispose()
  app = undefined
})

/** What each language says: its words, and the shapes of its dates and durations. */
const WORDS = {
  'zh-CN': {
    refuses: '表单拒绝了这些值：',
    issues: ['$.text：缺少必填的属性', '$.times：应为不大于 5 的数字，实际是 9'],
    said: ['权限被拒绝：webui 拒绝了'],
    ok: '成功',
    denied: '被拒绝',
    permissionDenied: '权限被拒绝',
    background: '转入后台',
    ms: /^\d+ 毫秒$/,
    waited: /^\d+ 毫秒$|^\d+(\.\d)? 秒$/,
    modes: ['默认', '只读', '接受编辑', '信任'],
    readOnly: ['只读', '只允许读取，写入与执行一律拒绝。'],
    always: '总是',
    // Intl.DateTimeFormat('zh-CN', { dateStyle: 'short', timeStyle: 'medium' }), and timeStyle alone.
    date: /^\d{4}\/\d{1,2}\/\d{1,2} \d{2}:\d{2}:\d{2}$/,
    time: /^\d{2}:\d{2}:\d{2}$/,
    answered: 'webui 允许 · 通过控制台 · 总是',
    declined: 'webui 拒绝 · 通过控制台 · 仅此一次',
    denialReason: [],
    timing: /^运行 \d+ 毫秒 · 等待 (\d+ 毫秒|\d+(\.\d)? 秒)$/,
    // The live log: what decided, in the page's words.
    decided: ['授权判定 → 允许（默认）：没有匹配的规则，只读类工具默认允许', '审批 → 允许（回答）：webui 允许 · 总是'],
  },
  'en-US': {
    refuses: 'The form refuses these values:',
    issues: ['$.text: missing required property', '$.times: expected a number <= 5, got 9'],
    said: [],
    ok: 'ok',
    denied: 'denied',
    permissionDenied: 'permission denied',
    background: 'moved to the background',
    ms: /^\d+ ms$/,
    waited: /^\d+ ms$|^\d+(\.\d)? s$/,
    modes: ['default', 'read-only', 'accept edits', 'trust'],
    readOnly: ['read-only', 'Only reads are allowed; writes and execs are denied.'],
    always: 'always',
    date: /^\d{1,2}\/\d{1,2}\/\d{2}, \d{1,2}:\d{2}:\d{2}\s[AP]M$/,
    time: /^\d{1,2}:\d{2}:\d{2}\s[AP]M$/,
    answered: 'allow by webui · via console · always',
    declined: 'deny by webui · via console · once',
    denialReason: ['webui declined it'],
    timing: /^ran \d+ ms · waited (\d+ ms|\d+(\.\d)? s)$/,
    // The live log: what decided, in the page's words.
    decided: ['authorize → allow (default): no rule matches; read tools are allowed by default', 'approve → allow (answer): allow by webui · always'],
  },
} as const

/** The input of a form field, found by the key the form shows. */
const field = (page: Page, key: string) =>
  page.locator('.k-schema-item', { has: page.locator('h3', { hasText: new RegExp(`^${key}$`) }) }).locator('input').first()

/** Runs `deploy` to `env` from the Tools view and answers its question on the Approvals tab; back on Tools, the result. */
async function deployFromPage(page: Page, answer: 'deny' | 'allow-always') {
  await page.click('[data-test=tab-tools]')
  await page.click('[data-test=tool-deploy]')
  await page.locator('.k-schema-item', { has: page.locator('h3', { hasText: /^env$/ }) }).locator('.el-select').click()
  await page.locator('.el-select-dropdown__item', { hasText: 'staging' }).click()
  await page.click('[data-test=run]')
  await until(() => app!.webui.asker.list().length, 'the question about deploy')
  // A call made meanwhile: it starts after deploy and ends before it.
  await app!.send('call', { tool: 'echo', args: { text: 'meanwhile' }, sessionId: 'chan-1', userId: 'alice' })
  await page.click('[data-test=tab-approvals]')
  await page.click(`[data-test=approval-deploy] [data-test=${answer}]`)
  await page.waitForSelector('[data-test=approvals-empty]')
  await page.click('[data-test=tab-tools]')
  await page.waitForSelector('[data-test=result-status]')
}

for (const locale of ['zh-CN', 'en-US'] as const) {
  const words = WORDS[locale]
  describe(`the console in ${locale}`, () => {
    it('words results, durations, dates, modes, grants and the audit trail in the page\'s language', async () => {
      const browser = await openBrowser({ locale })
      close = () => browser.close()
      app = await startConsoleApp()
      const page = await browser.context.newPage()
      await page.goto(app.base)

      // An untouched form refuses nothing yet (its required `text` is empty); an edit out of bounds lists both.
      await page.click('[data-test=tool-echo]')
      await page.waitForSelector('[data-test=args-form]')
      expect(await page.locator('[data-test=form-error]').count()).toBe(0)
      expect(await page.isDisabled('[data-test=run]')).toBe(false)
      await field(page, 'times').fill('9')
      await expect.poll(() => page.locator('[data-test=form-error] p').textContent()).toBe(words.refuses)
      expect(await page.locator('[data-test=form-issue] code').allInnerTexts()).toEqual(['$.text', '$.times'])
      // The core's catalogue; in English, the pipeline's own words, as the model reads them.
      expect(await page.locator('[data-test=form-issue]').allInnerTexts()).toEqual(words.issues)
      expect(await page.isDisabled('[data-test=run]')).toBe(true)
      await field(page, 'times').fill('2')
      await field(page, 'text').fill('hi')
      await page.click('[data-test=run]')
      await expect.poll(() => page.textContent('[data-test=result-status]')).toBe(words.ok)
      expect(await page.textContent('[data-test=result-duration]')).toMatch(words.ms)

      // Denied by a person: the status, and its code in words.
      await deployFromPage(page, 'deny')
      expect(await page.textContent('[data-test=result-status]')).toBe(words.denied)
      expect(await page.textContent('[data-test=result-code]')).toBe(words.permissionDenied)
      expect(await page.getAttribute('[data-test=result-code]', 'data-code')).toBe('permission_denied')
      expect(await page.textContent('[data-test=result-wait]')).toMatch(words.waited)
      // What a person reads of it, in the page's words; in English that is the model's content, shown once.
      expect(await page.locator('[data-test=result-said]').allInnerTexts()).toEqual(words.said)

      // Allowed always: the wait in the chat's words, the grant's scope as the chat names it.
      await deployFromPage(page, 'allow-always')
      expect(await page.textContent('[data-test=result-status]')).toBe(words.ok)
      expect(await page.textContent('[data-test=result-wait]')).toMatch(words.waited)
      expect(await page.textContent('[data-test=result-wait]')).not.toMatch(/\d\.\d ms/)
      await page.click('[data-test=tab-grants]')
      expect(await page.locator('[data-test="grant-tool:deploy"] td').nth(2).textContent()).toBe(words.always)

      // A call that moves to the background: its status, then its task on a line of its own.
      await page.click('[data-test=tab-tools]')
      await page.click('[data-test=tool-wait]')
      await page.click('[data-test=run]')
      await expect.poll(() => page.getAttribute('[data-test=result-status]', 'data-status')).toBe('background')
      expect(await page.textContent('[data-test=result-status]')).toBe(words.background)
      expect(await page.textContent('[data-test=result-task]')).toMatch(/^task_\w+$/)
      expect(await page.locator('[data-test=result-code]').count()).toBe(0)
      await page.click('[data-test=tab-tasks]')
      await expect.poll(() => page.locator('[data-test=task-started]').count()).toBe(1)
      expect(await page.textContent('[data-test=task-started]')).toMatch(words.date)

      // The modes by name.
      await page.click('[data-test=tab-modes]')
      await expect.poll(() => page.locator('[data-test^=mode-]:not([data-test=mode-session]):not([data-test=mode-current]):not([data-test=mode-hint])').allInnerTexts()).toEqual(words.modes)
      await page.click('[data-test=mode-readOnly]')
      await expect.poll(() => page.textContent('[data-test=mode-current]')).toBe(words.readOnly[0])
      expect(await page.textContent('[data-test=mode-hint]')).toBe(words.readOnly[1])

      // The audit trail: each row's end in the page's locale, the last ended first.
      await page.click('[data-test=tab-log]')
      await expect.poll(() => page.locator('[data-test=audit-row]').count()).toBe(6)
      const rows = page.locator('[data-test=audit-row]')
      const ends = await page.locator('[data-test=audit-time]').evaluateAll((cells) => cells.map((cell) => Number(cell.getAttribute('data-at'))))
      expect(ends).toEqual([...ends].sort((a, b) => b - a))
      for (const text of await page.locator('[data-test=audit-time]').allInnerTexts()) expect(text).toMatch(words.date)
      // The allowed deploy started before the echo made meanwhile, and ended after it: above it.
      // (The call to `wait` ended as it moved to the background; its task is still running.)
      expect(await rows.evaluateAll((all) => all.map((row) => `${row.getAttribute('data-tool')} ${row.getAttribute('data-outcome')}`))).toEqual([
        'wait background', 'deploy ok', 'echo ok', 'deploy denied', 'echo ok', 'echo ok',
      ])
      // A denial's reason is the model's English: shown in English; in Chinese the row's own columns say who declined.
      const declined = page.locator('[data-test=audit-row][data-tool=deploy][data-outcome=denied]')
      expect(await declined.locator('[data-test=audit-reason]').allInnerTexts()).toEqual(words.denialReason)
      expect(await declined.locator('[data-test=audit-answer]').innerText()).toBe(words.declined)
      const allowed = page.locator('[data-test=audit-row][data-tool=deploy][data-outcome=ok]')
      expect(await allowed.locator('[data-test=audit-answer]').innerText()).toBe(words.answered)
      expect(await allowed.locator('[data-test=audit-timing]').innerText()).toMatch(words.timing)
      for (const text of await page.locator('[data-test=log-time]').allInnerTexts()) expect(text).toMatch(words.time)
      const live = await page.locator('[data-test=live-log] [data-test=log-outcome]').allInnerTexts()
      for (const line of words.decided) expect(live).toContain(line)
    })
  })
}
