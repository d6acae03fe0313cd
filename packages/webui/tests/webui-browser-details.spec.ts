import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { openBrowser } from './browser'
import { startConsoleApp, until } from './console-app'

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

async function open(...args: Parameters<typeof startConsoleApp>) {
  app = await startConsoleApp(...args)
  page = await context.newPage()
  await page.goto(app.base)
  return page
}

const calls = (status?: string) => app!.webui.log.list()
  .filter((entry) => entry.kind === 'call-end' && (!status || (entry as { status: string }).status === status))

describe('what the console shows stays with what it belongs to', () => {
  it('clears a JSON error and the last result on switching back to the form', async () => {
    const page = await open()
    await page.click('[data-test=tool-echo]')
    await field(page, 'text').fill('hello')
    await page.click('[data-test=run]')
    await expect.poll(() => page.textContent('[data-test=result-content]')).toBe('hello')
    await page.click('[data-test=toggle-raw]')
    await page.fill('[data-test=raw-args]', '{"text": ')
    // Checked as typed: Run stays disabled while the form lists what is wrong.
    expect(await page.isDisabled('[data-test=run]')).toBe(true)
    await expect.poll(() => page.textContent('[data-test=form-error]')).toContain('$: ')
    await page.click('[data-test=toggle-raw]')
    expect(await page.locator('[data-test=form-error]').count()).toBe(0)
    expect(await page.locator('[data-test=result]').count()).toBe(0)
    expect(await page.locator('[data-test=force]').count()).toBe(0)
    // The form still holds what was typed in it.
    expect(await field(page, 'text').inputValue()).toBe('hello')
  })

  it('shows a result only on the tool whose call it came from', async () => {
    const page = await open()
    await page.click('[data-test=tool-echo]')
    await field(page, 'text').fill('hello')
    await page.click('[data-test=run]')
    await expect.poll(() => page.textContent('[data-test=result-content]')).toBe('hello')
    await page.click('[data-test=tool-html]')
    expect(await page.locator('[data-test=result]').count()).toBe(0)
    // A call still waiting when another tool is picked ends without showing up there.
    await page.click('[data-test=tool-deploy]')
    await page.locator('.k-schema-item', { has: page.locator('h3', { hasText: /^env$/ }) }).locator('.el-select').click()
    await page.locator('.el-select-dropdown__item', { hasText: 'staging' }).click()
    await page.click('[data-test=run]')
    const [question] = await until(async () => (await app!.send('approvals.list')).body as any[], 'the question')
    await page.click('[data-test=tool-echo]')
    await app!.send('approvals.answer', { id: question.id, decision: 'allow', scope: 'once' })
    await until(() => calls('ok').length === 2, 'the deploy call to end')
    await page.waitForTimeout(200)
    expect(await page.locator('[data-test=result]').count()).toBe(0)
    expect(await page.textContent('[data-test=run]')).toBe('Run')
  })

  it('drops the Approvals badge with the question it counted, answered or expired', async () => {
    const page = await open({}, { askTimeout: 2_000 })
    await page.click('[data-test=tab-approvals]')
    // Answered on the page.
    const first = app!.send('call', { tool: 'deploy', args: { env: 'prod' }, sessionId: 'chan-2', userId: 'bob' })
    await page.waitForSelector('[data-test=approval-deploy]')
    expect(await page.textContent('[data-test=approvals-count]')).toBe('1')
    await page.click('[data-test=approval-deploy] [data-test=allow-once]')
    await page.waitForSelector('[data-test=approvals-empty]')
    expect(await page.locator('[data-test=approvals-count]').count()).toBe(0)
    expect((await first).body.result.status).toBe('ok')
    // Expired: nobody answers within askTimeout.
    const second = app!.send('call', { tool: 'deploy', args: { env: 'prod' }, sessionId: 'chan-3', userId: 'carol' })
    await page.waitForSelector('[data-test=approval-deploy]')
    expect(await page.textContent('[data-test=approvals-count]')).toBe('1')
    await page.waitForSelector('[data-test=approvals-empty]', { timeout: 5_000 })
    expect(await page.locator('[data-test=approvals-count]').count()).toBe(0)
    expect((await second).body.result.status).not.toBe('ok')
  })

  it('names who asked once each: the console\'s own call, and a chat user\'s', async () => {
    const page = await open()
    await page.click('[data-test=tab-approvals]')
    // A call from the console's own session: platform webui, session "webui", no user.
    const own = app!.send('call', { tool: 'deploy', args: { env: 'prod' }, sessionId: 'webui' })
    await page.waitForSelector('[data-test=approval-deploy]')
    expect(await page.innerText('[data-test=approval-deploy] [data-test=approval-who]')).toBe('Console · session webui')
    await page.click('[data-test=approval-deploy] [data-test=allow-once]')
    await own
    // The answered card goes first: otherwise the next wait could find it still on the page.
    await page.waitForSelector('[data-test=approvals-empty]', { timeout: 5_000 })
    const bob = app!.send('call', { tool: 'deploy', args: { env: 'prod' }, sessionId: 'chan-2', userId: 'bob' })
    await page.waitForSelector('[data-test=approval-deploy]')
    expect(await page.innerText('[data-test=approval-deploy] [data-test=approval-who]')).toBe('Console bob · session chan-2')
    await page.click('[data-test=approval-deploy] [data-test=deny]')
    await bob
  })

  it('lists every bad path the form refuses, as the pipeline does', async () => {
    const page = await open()
    const errors: string[] = []
    page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()) })
    await page.click('[data-test=tool-echo]')
    await page.click('[data-test=toggle-raw]')
    await page.fill('[data-test=raw-args]', '{"times": 9, "style": "whisper"}')
    await page.waitForSelector('[data-test=form-issue]')
    const issues = await page.locator('[data-test=form-issue]').allTextContents()
    expect(issues.map((issue) => issue.split(':')[0])).toEqual(['$.text', '$.times', '$.style'])
    await page.click('[data-test=force]')
    await expect.poll(() => page.textContent('[data-test=result-status]')).toBe('error')
    const content = (await page.textContent('[data-test=result-content]'))!
    for (const path of ['$.text', '$.times', '$.style']) expect(content).toContain(`- ${path}: `)
    // Checking in the page breaks none of its rules (its CSP forbids generated code).
    expect(errors).toEqual([])
  })
})

describe('the console reads well', () => {
  it('keeps the line breaks of a bulleted description', async () => {
    const page = await open()
    await page.click('[data-test=tool-echo]')
    expect(await page.innerText('[data-test=tool-description]')).toBe('Repeat a text\n- up to five times\n- plainly or shouted')
  })

  it('shows each tool\'s first description line and a readable owner in the list', async () => {
    const page = await open()
    expect(await page.innerText('[data-test=tool-echo] [data-test=tool-summary]')).toBe('Repeat a text')
    expect(await page.innerText('[data-test=tool-deploy] [data-test=tool-summary]')).toBe('Deploy the current build')
    expect(await page.innerText('[data-test=tool-echo] [data-test=tool-owner]')).toBe('console-test-tools')
    expect(await page.innerText('[data-test=tool-task_status] [data-test=tool-owner]')).toBe('Background service')
  })

  it('shows no "Basic Settings" heading over the form', async () => {
    const page = await open()
    await page.click('[data-test=tool-echo]')
    await page.waitForSelector('[data-test=args-form] .k-schema-item')
    expect(await page.innerText('.tool-detail')).not.toContain('Basic Settings')
    expect(await page.locator('[data-test=args-form] .k-schema-header', { hasText: 'Basic Settings' }).isVisible()).toBe(false)
    // A nested object's own heading stays.
    expect(await page.locator('[data-test=args-form] .k-schema-header', { hasText: 'Nested options' }).isVisible()).toBe(true)
  })

  it('never asks for /favicon.ico', async () => {
    app = await startConsoleApp()
    page = await context.newPage()
    const requested: string[] = []
    page.on('request', (request) => { requested.push(new URL(request.url()).pathname) })
    await page.goto(app.base)
    await page.click('[data-test=tool-echo]')
    await page.waitForTimeout(300)
    expect(requested).toContain('/dogu/api/tools.list')
    expect(requested.filter((path) => path.endsWith('favicon.ico'))).toEqual([])
    expect(await page.locator('link[rel=icon]').getAttribute('href')).toMatch(/^data:image\/svg\+xml,/)
  })
})

describe('the console in Chinese', () => {
  it('names effects, grant scopes and subjects in Chinese', async () => {
    app = await startConsoleApp()
    const call = app.send('call', { tool: 'deploy', args: { env: 'staging' }, sessionId: 'chan-9', userId: 'bob' })
    const [question] = await until(async () => (await app!.send('approvals.list')).body as any[], 'the question')
    await app.send('approvals.answer', { id: question.id, decision: 'allow', scope: 'session' })
    await call
    const chinese = await openBrowser({ locale: 'zh-CN' })
    try {
      const page = await chinese.context.newPage()
      await page.goto(app.base)
      expect(await page.innerText('[data-test=tool-echo] [data-test=tool-effect]')).toBe('只读')
      expect(await page.innerText('[data-test=tool-deploy] [data-test=tool-effect]')).toBe('写入')
      await page.click('[data-test=tab-grants]')
      const row = page.locator('[data-test="grant-tool:deploy"]')
      await row.waitFor()
      expect(await row.innerText()).toContain('本会话')
      expect(await row.innerText()).toContain('会话 chan-9, 用户 bob')
    } finally {
      await chinese.close()
    }
  })
})
