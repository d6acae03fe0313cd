// Issue 31 in the console: a call over its quota shows as rate limited, with when to try
// again; the Quotas tab shows what is left for a session, and the Log tab's audit view
// lists the refusal with the quota that decided it.
import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { openBrowser } from './browser'
import { startConsoleApp } from './console-app'

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

const QUOTAS = [
  { name: 'echo per user', tools: 'echo', per: 'user' as const, max: 2, window: '1h' },
  { name: 'everything per session', per: 'session' as const, max: 50, window: '1d' },
]

describe('quotas in the console, in Chromium', () => {
  it('calls until the quota is used up: the call view shows rate limited with the retry time, the Quotas tab 0 left', async () => {
    app = await startConsoleApp({}, { tools: { quotas: QUOTAS, maxRunning: { session: 2 } } })
    page = await context.newPage()
    await page.goto(app.base)

    await page.click('[data-test=tool-echo]')
    await page.fill('[data-test=user-id]', 'alice')
    await field(page, 'text').fill('hello')
    for (let i = 1; i <= 2; i++) {
      await page.click('[data-test=run]')
      await expect.poll(() => app!.webui.log.list().filter((entry) => entry.kind === 'call-end').length).toBe(i)
      await expect.poll(() => page!.getAttribute('[data-test=result-status]', 'data-status')).toBe('ok')
    }
    expect(await page.locator('[data-test=result-retry]').count()).toBe(0)

    await page.click('[data-test=run]')
    await expect.poll(() => page!.getAttribute('[data-test=result-status]', 'data-status')).toBe('rate_limited')
    expect(await page.textContent('[data-test=result-status]')).toBe('over a quota')
    expect(await page.textContent('[data-test=result-content]')).toMatch(/^Rate limited: quota 'echo per user' used: 2 per 1 h; try again in \d+ (min|s|h)\.$/)
    // When it may run again, in the chat's words, counted from the answer's retryAfterMs.
    expect(await page.textContent('[data-test=result-retry]')).toMatch(/^in \d+ (min|s|h)$/)
    // The tool did not run a third time: two ends of echo, then the refusal.
    expect(app.webui.log.list().filter((entry) => entry.kind === 'call-end').map((entry) => (entry as { status: string }).status)).toEqual(['ok', 'ok', 'rate_limited'])

    await page.click('[data-test=tab-quotas]')
    await page.fill('[data-test=quota-user]', 'alice')
    const row = (name: string) => page!.locator('[data-test=quota-row]', { has: page!.locator('[data-test=quota-name]', { hasText: name }) })
    await expect.poll(() => row('echo per user').locator('[data-test=quota-remaining]').textContent()).toBe('0')
    const echo = row('echo per user')
    expect(await echo.locator('[data-test=quota-used]').textContent()).toBe('2 of 2 per 1 h')
    expect(await echo.locator('[data-test=quota-tools]').textContent()).toBe('echo')
    expect(await echo.locator('[data-test=quota-per]').textContent()).toBe('user')
    expect(await echo.locator('[data-test=quota-resets]').textContent()).toMatch(/^in \d+ (min|s|h)$/)
    expect(await echo.getAttribute('class')).toContain('quota-used-up')
    // The session's own quota counts every call, the refused one not included.
    const session = row('everything per session')
    expect(await session.locator('[data-test=quota-used]').textContent()).toBe('2 of 50 per 1 d')
    expect(await session.locator('[data-test=quota-remaining]').textContent()).toBe('48')
    expect(await session.locator('[data-test=quota-tools]').textContent()).toBe('every tool')
    expect(await page.textContent('[data-test=quotas-max-running]')).toBe('at most 2 per session')

    // Another user in another session has all of theirs.
    await page.fill('[data-test=quota-user]', 'bob')
    await page.fill('[data-test=quota-session]', 'other')
    await expect.poll(() => row('echo per user').locator('[data-test=quota-remaining]').textContent()).toBe('2')
    expect(await row('everything per session').locator('[data-test=quota-remaining]').textContent()).toBe('50')

    // An empty session id is refused by the server, and the view says why.
    await page.fill('[data-test=quota-session]', '')
    await expect.poll(() => page!.textContent('[data-test=quotas-error]')).toMatch(/sessionId/)

    // The audit view lists the refusal, decided by the quota.
    await page.click('[data-test=tab-log]')
    await page.selectOption('[data-test=audit-outcome]', 'rate_limited')
    await expect.poll(() => page!.locator('[data-test=audit-row]').count()).toBe(1)
    const refused = page.locator('[data-test=audit-row]')
    expect(await refused.getAttribute('data-outcome')).toBe('rate_limited')
    expect(await refused.locator('[data-test=audit-status]').textContent()).toBe('over a quota')
    expect(await refused.locator('[data-test=audit-decided]').textContent()).toBe('quota "echo per user": used up')
    // The live log gives the retry time beside the call's end.
    const ends = await page.locator('tr.log-call-end [data-test=log-outcome]').allInnerTexts()
    expect(ends[0]).toMatch(/^over a quota · \d+ ms · try again in \d+ (min|s|h)$/)
  })

  it('in Chinese: the status, the retry time and the quota table in Chinese words', async () => {
    const zh = await openBrowser({ locale: 'zh-CN' })
    try {
      app = await startConsoleApp({}, { tools: { quotas: [QUOTAS[0]!] } })
      page = await zh.context.newPage()
      await page.goto(app.base)
      await page.click('[data-test=tool-echo]')
      await page.fill('[data-test=user-id]', 'alice')
      await field(page, 'text').fill('你好')
      for (let i = 1; i <= 3; i++) {
        await page.click('[data-test=run]')
        await expect.poll(() => app!.webui.log.list().filter((entry) => entry.kind === 'call-end').length).toBe(i)
      }
      await expect.poll(() => page!.getAttribute('[data-test=result-status]', 'data-status')).toBe('rate_limited')
      expect(await page.textContent('[data-test=result-status]')).toBe('超出配额')
      // The chat's words: 15 分钟后, with its space.
      expect(await page.textContent('[data-test=result-retry]')).toMatch(/^\d+ (分钟|秒|小时)后$/)
      await page.click('[data-test=tab-quotas]')
      await page.fill('[data-test=quota-user]', 'alice')
      const row = page.locator('[data-test=quota-row]')
      await expect.poll(() => row.locator('[data-test=quota-remaining]').textContent()).toBe('0')
      expect(await row.locator('[data-test=quota-used]').textContent()).toBe('2 / 2（每 1 小时）')
      expect(await row.locator('[data-test=quota-per]').textContent()).toBe('每人')
      expect(await page.textContent('[data-test=quotas-max-running]')).toBe('未设上限。')
      await page.close()
      page = undefined
    } finally {
      await zh.close()
    }
  })
})
