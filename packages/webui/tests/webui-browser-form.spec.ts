import { defineTool } from '@dogu/core'
import type { BrowserContext, Page } from 'playwright-core'
import Schema from 'schemastery'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { openBrowser } from './browser'
import { startConsoleApp } from './console-app'

// The form keeps what is typed and says what is wrong with it: schemastery-vue alone drops a
// value its schema refuses (the model keeps the previous one) and Element Plus clamps a number
// to its bounds (docs/webui.md, "The form and schemastery-vue").

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

// The playground's `lookup` arguments (external/lookup), with a nested object besides.
const findArgs = Schema.object({
  q: Schema.string().min(1).max(100).required().description('What to look for'),
  limit: Schema.natural().min(1).max(5).default(5).description('Most rows to return'),
  options: Schema.object({ sep: Schema.string().max(3).default(',') }).description('Nested options'),
})

/** The console app with a `find` tool; the page, and the `args` of every call it sends. */
async function open() {
  app = await startConsoleApp()
  app.ctx.tools.define(defineTool({
    name: 'find',
    description: 'Find rows',
    args: findArgs,
    traits: { effect: 'read' },
    run: ({ q, limit }) => `${q.length}:${limit}`,
  }))
  page = await context.newPage()
  const sent: any[] = []
  page.on('request', (request) => {
    if (new URL(request.url()).pathname.endsWith('/api/call')) sent.push(request.postDataJSON().args)
  })
  await page.goto(app.base)
  return { page, sent }
}

/** The input of a form field, found by the key the form shows. */
const field = (page: Page, key: string) =>
  page.locator('.k-schema-item', { has: page.locator('h3', { hasText: new RegExp(`^${key}$`) }) }).locator('input').first()

const issues = (page: Page) => page.locator('[data-test=form-issue]').allInnerTexts()

describe('the form shows what is typed and every violation of it', () => {
  it('keeps 150 characters in a string of at most 100, says so at $.q, and sends them only when told to', async () => {
    const { page, sent } = await open()
    await page.click('[data-test=tool-find]')
    await field(page, 'q').fill('a'.repeat(150))
    expect(await field(page, 'q').inputValue()).toBe('a'.repeat(150))
    await expect.poll(() => issues(page)).toEqual(['$.q: expected at most 100 characters, got 150'])
    expect(await page.isDisabled('[data-test=run]')).toBe(true)
    // "Send anyway" sends what the box shows, never an older or emptier value.
    await page.click('[data-test=force]')
    await expect.poll(() => page.textContent('[data-test=result-status]')).toBe('error')
    expect(sent).toEqual([{ q: 'a'.repeat(150) }])
    expect(await page.textContent('[data-test=result-content]')).toContain('$.q: expected at most 100 characters, got 150')
  })

  it('refuses the 101st character, and never sends the 100 that were valid before it', async () => {
    const { page, sent } = await open()
    await page.click('[data-test=tool-find]')
    await field(page, 'q').fill('b'.repeat(100))
    await expect.poll(() => page.isDisabled('[data-test=run]')).toBe(false)
    expect(await issues(page)).toEqual([])
    await field(page, 'q').press('End')
    await field(page, 'q').press('c')
    expect(await field(page, 'q').inputValue()).toBe(`${'b'.repeat(100)}c`)
    await expect.poll(() => issues(page)).toEqual(['$.q: expected at most 100 characters, got 101'])
    expect(await page.isDisabled('[data-test=run]')).toBe(true)
    await page.click('[data-test=force]')
    await expect.poll(() => page.textContent('[data-test=result-status]')).toBe('error')
    expect(sent).toEqual([{ q: `${'b'.repeat(100)}c` }])
    // Back to 100: valid again, and Run sends it.
    await field(page, 'q').press('End')
    await field(page, 'q').press('Backspace')
    await expect.poll(() => issues(page)).toEqual([])
    await page.click('[data-test=run]')
    await expect.poll(() => page.textContent('[data-test=result-content]')).toBe('100:5')
    expect(sent.at(-1)).toEqual({ q: 'b'.repeat(100) })
  })

  it('keeps 99 in a number of at most 5, unclamped, and says so at $.limit', async () => {
    const { page, sent } = await open()
    await page.click('[data-test=tool-find]')
    await field(page, 'q').fill('France')
    await field(page, 'limit').fill('99')
    // Leaving the box is where Element Plus clamped it.
    await field(page, 'limit').press('Tab')
    await page.waitForTimeout(100)
    expect(await field(page, 'limit').inputValue()).toBe('99')
    await expect.poll(() => issues(page)).toEqual(['$.limit: expected a number <= 5, got 99'])
    expect(await page.isDisabled('[data-test=run]')).toBe(true)
    await page.click('[data-test=force]')
    await expect.poll(() => page.textContent('[data-test=result-status]')).toBe('error')
    expect(sent).toEqual([{ q: 'France', limit: 99 }])
    expect(await field(page, 'limit').inputValue()).toBe('99')
  })

  it('lists every violation at once by its path, the same in the form and as JSON', async () => {
    const { page, sent } = await open()
    await page.click('[data-test=tool-find]')
    // Before anything is typed the form refuses nothing yet; Run lists the one required value, and sends nothing.
    await page.waitForSelector('[data-test=args-form]')
    expect(await page.locator('[data-test=form-error]').count()).toBe(0)
    await page.click('[data-test=run]')
    await expect.poll(() => issues(page)).toEqual(['$.q: missing required property'])
    expect(await page.isDisabled('[data-test=run]')).toBe(true)
    await field(page, 'q').fill('x'.repeat(120))
    await field(page, 'limit').fill('0')
    await field(page, 'limit').press('Tab')
    await field(page, 'options\\.sep').fill('; ; ;')
    const expected = [
      '$.q: expected at most 100 characters, got 120',
      '$.limit: expected a number >= 1, got 0',
      '$.options.sep: expected at most 3 characters, got 5',
    ]
    await expect.poll(() => issues(page)).toEqual(expected)
    // The JSON editor holds the same value and lists the same violations.
    await page.click('[data-test=toggle-raw]')
    expect(JSON.parse(await page.inputValue('[data-test=raw-args]'))).toEqual({ q: 'x'.repeat(120), limit: 0, options: { sep: '; ; ;' } })
    expect(await issues(page)).toEqual(expected)
    // An edit there is checked as it is typed, and goes back into the form as typed.
    await page.fill('[data-test=raw-args]', JSON.stringify({ q: 'y', limit: 99, options: { sep: '----' } }))
    await expect.poll(() => issues(page)).toEqual(['$.limit: expected a number <= 5, got 99', '$.options.sep: expected at most 3 characters, got 4'])
    await page.click('[data-test=toggle-raw]')
    expect(await field(page, 'limit').inputValue()).toBe('99')
    expect(await field(page, 'options\\.sep').inputValue()).toBe('----')
    expect(await issues(page)).toEqual(['$.limit: expected a number <= 5, got 99', '$.options.sep: expected at most 3 characters, got 4'])
    // A type the form has no box for stays in the JSON editor, and the form says it kept its values.
    await page.click('[data-test=toggle-raw]')
    await page.fill('[data-test=raw-args]', JSON.stringify({ q: 'z', limit: 'many' }))
    await expect.poll(() => issues(page)).toEqual(['$.limit: expected a number, got string "many"'])
    await page.click('[data-test=toggle-raw]')
    expect(await page.isVisible('[data-test=json-not-applied]')).toBe(true)
    expect(await field(page, 'q').inputValue()).toBe('y')
    // Nothing went out: Run stayed disabled throughout.
    expect(await page.isDisabled('[data-test=run]')).toBe(true)
    expect(sent).toEqual([])
  })
})

describe('the Tasks and Log views in Chinese', () => {
  let zh: Awaited<ReturnType<typeof openBrowser>>
  beforeAll(async () => { zh = await openBrowser({ locale: 'zh-CN' }) })
  afterAll(async () => { await zh?.close() })

  // Every keyword the server sends for a task, a result, a log line's kind and a decision.
  const TASK_STATUSES = ['running', 'succeeded', 'failed', 'cancelled', 'interrupted']
  const RESULT_STATUSES = ['ok', 'error', 'denied', 'timed_out', 'cancelled', 'background', 'rate_limited']
  const KINDS = ['call-start', 'call-progress', 'call-end', 'decision']
  const PHASES = ['authorize', 'approve', 'middleware', 'quota']
  const DECISIONS = ['allow', 'ask', 'deny']
  const SOURCES = ['rule', 'grant', 'mode', 'default', 'answer', 'timeout', 'cancelled', 'no-asker', 'askers-failed', 'stopped', 'middleware', 'quota']
  const RAW = new RegExp(`\\b(${[...TASK_STATUSES, ...RESULT_STATUSES, 'limit_exceeded', ...KINDS, ...PHASES, ...DECISIONS, ...SOURCES].join('|')})\\b`)

  it('shows no status, outcome or kind keyword untranslated', async () => {
    app = await startConsoleApp()
    page = await zh.context.newPage()
    const at = Date.now()
    const session = { id: 'chan-1' }
    // Every status at once: the server's own answers, with one task or line per keyword.
    const tasks = [...TASK_STATUSES, 'limit_exceeded'].map((status, i) => ({ id: `t${i}`, tool: 'wait', session, status, startedAt: at, ...(status === 'running' ? {} : { result: { content: '42' } }) }))
    let seq = 0
    const line = (entry: object) => ({ seq: ++seq, at, tool: 'wait', sessionId: 'chan-1', callId: 'c1', ...entry })
    const log = [
      line({ kind: 'call-start', args: {} }),
      line({ kind: 'call-progress', message: '…' }),
      ...RESULT_STATUSES.map((status) => line({ kind: 'call-end', status, durationMs: 1, ...(status === 'rate_limited' ? { retryAfterMs: 840_000 } : {}) })),
      ...PHASES.flatMap((phase) => DECISIONS.map((decision) => line({ kind: 'decision', phase, decision, source: 'rule' }))),
      ...SOURCES.map((source) => line({ kind: 'decision', phase: 'approve', decision: 'deny', source })),
      // A quota's refusal as the pipeline reports it: the reason is the model's text, in English; what decided, in the page's words.
      line({ kind: 'decision', phase: 'quota', decision: 'deny', source: 'quota', reason: 'try again in 14 min', detail: { name: 'echo per user' } }),
      line({ kind: 'decision', phase: 'authorize', decision: 'allow', source: 'default', reason: 'no rule matches; read tools are allowed by default', detail: { effect: 'read' } }),
    ]
    await page.route('**/dogu/api/tasks.list', (route) => route.fulfill({ json: tasks }))
    await page.route('**/dogu/api/log.list', (route) => {
      const since = (route.request().postDataJSON()?.since as number | undefined) ?? 0
      return route.fulfill({ json: log.filter((entry) => entry.seq > since) })
    })
    await page.goto(app.base)

    await page.click('[data-test=tab-tasks]')
    await expect.poll(() => page!.locator('[data-test=task-status]').count()).toBe(tasks.length)
    const statuses = await page.locator('[data-test=task-status]').allInnerTexts()
    expect(statuses).toEqual(['超出限制', '已中断', '已取消', '失败', '已完成', '运行中'])
    expect(await page.innerText('.tasks')).not.toMatch(RAW)

    await page.click('[data-test=tab-log]')
    await expect.poll(() => page!.locator('[data-test=log-kind]').count()).toBe(log.length)
    const kinds = await page.locator('[data-test=log-kind]').allInnerTexts()
    expect(new Set(kinds)).toEqual(new Set(['调用开始', '调用进度', '调用结束', '权限判定']))
    // The call-start line shows the arguments as sent; every other cell is the console's words.
    const outcomes = await page.locator('tr:not(.log-call-start) [data-test=log-outcome]').allInnerTexts()
    expect(outcomes.length).toBe(log.length - 1)
    for (const text of outcomes) expect(text).not.toMatch(RAW)
    // Durations in the chat's words: 1 毫秒, 14 分钟后.
    expect(outcomes).toContain('成功 · 1 毫秒')
    expect(outcomes).toContain('授权判定 → 询问（规则）')
    expect(outcomes).toContain('超出配额 · 1 毫秒 · 14 分钟后可重试')
    expect(outcomes).toContain('配额 → 拒绝（配额）：配额“echo per user”：已用完')
    expect(outcomes).toContain('授权判定 → 允许（默认）：没有匹配的规则，只读类工具默认允许')
    // No English left but the names quoted (“echo per user”).
    for (const text of outcomes) expect(text.replace(/“[^”]*”/g, '')).not.toMatch(/[A-Za-z]{3,}/)
    expect(await page.innerText('.log')).not.toMatch(RAW)
  })
})
