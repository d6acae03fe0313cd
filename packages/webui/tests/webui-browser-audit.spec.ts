import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Dogu, { PermissionService, ToolService } from '@dogu/cordis'
import { defineTool } from '@dogu/core'
import { Context } from 'cordis'
import type { BrowserContext, Page } from 'playwright-core'
import Schema from 'schemastery'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { WebUI } from '../src'
import { openBrowser } from './browser'
import { until } from './console-app'

let browser: Awaited<ReturnType<typeof openBrowser>>
let context: BrowserContext
let dir: string
const running: Context[] = []

beforeAll(async () => {
  browser = await openBrowser()
  context = browser.context
})
afterAll(async () => {
  await browser?.close()
})
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dogu-webui-audit-'))
})
afterEach(async () => {
  for (const ctx of running.splice(0).reverse()) await ctx.fiber.dispose()
  await rm(dir, { recursive: true, force: true })
})

const echoArgs = Schema.object({ text: Schema.string().required() })
const deployArgs = Schema.object({ env: Schema.string().required() })

/**
 * A Cordis app whose Dogu services keep their files in `dir`: stopped and started again on
 * the same `dir`, it has the same audit trail. `audit: false` leaves the audit service out.
 */
async function startApp(options: { audit?: false } = {}) {
  const ctx = new Context()
  guardLogs(ctx)
  running.push(ctx)
  const permissions = {
    storePath: join(dir, 'permissions.json'),
    rules: [{ permission: 'tool:purge', decision: 'deny' as const, name: 'never purge' }],
  }
  if (options.audit === false) {
    await ctx.plugin(ToolService)
    await ctx.plugin(PermissionService, permissions)
  } else {
    await ctx.plugin(Dogu, { audit: { storePath: join(dir, 'audit.jsonl') }, permissions, background: { storePath: join(dir, 'background.json') } })
  }
  await ctx.plugin({
    name: 'audit-test-tools',
    inject: ['tools'],
    apply(ctx: Context) {
      ctx.tools.define(defineTool({ name: 'echo', description: 'Repeat a text', args: echoArgs, traits: { effect: 'read' }, run: ({ text }) => text }))
      ctx.tools.define(defineTool({ name: 'deploy', description: 'Deploy', args: deployArgs, traits: { effect: 'write' }, run: ({ env }) => `deployed to ${env}` }))
      ctx.tools.define(defineTool({ name: 'purge', description: 'Purge the cache', args: Schema.object({}), traits: { effect: 'exec' }, run: () => 'purged' }))
    },
  })
  const fiber = await ctx.plugin(WebUI, { port: 0 })
  const base = ctx.get('webui')!.url
  const send = async (method: string, payload: unknown = {}) => {
    const response = await fetch(`${base}/api/${method}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload), signal: AbortSignal.timeout(20_000) })
    return await response.json() as any
  }
  return {
    ctx,
    base,
    send,
    /** A call from the console, as `userId`: a question it raises gets `answer`. */
    async call(tool: string, args: unknown, userId: string, answer?: { decision: 'allow' | 'deny'; scope?: 'once' | 'session' }) {
      const call = send('call', { tool, args, sessionId: `chan-${userId}`, userId })
      if (answer) {
        const [question] = await until(async () => (await send('approvals.list')) as any[], `the question about ${tool}`)
        await send('approvals.answer', { id: question.id, ...answer })
      }
      return (await call).result
    },
    async stop() {
      running.splice(running.indexOf(ctx), 1)
      await fiber.dispose()
      await ctx.fiber.dispose()
    },
  }
}

/** The rows of the audit log as the page shows them: tool, outcome, caller (its first line), decided, answer. */
async function rows(page: Page) {
  return page.locator('[data-test=audit-row]').evaluateAll((trs) => trs.map((tr) => {
    const cell = (name: string) => (tr.querySelector(`[data-test=audit-${name}]`) as HTMLElement).innerText.trim()
    return [cell('tool'), cell('status'), cell('caller').split('\n')[0], cell('decided'), cell('answer')]
  }))
}

/** Waits until the audit log shows exactly `expected` (see `rows`), newest first. */
async function expectRows(page: Page, expected: string[][]) {
  await expect.poll(() => rows(page)).toEqual(expected)
}

async function screenshot(page: Page, name: string) {
  if (process.env.DOGU_SCREENSHOTS === '1') await page.screenshot({ path: join(import.meta.dirname, `../../../docs/images/${name}.png`), fullPage: true })
}

describe('the Log view reads the audit trail', () => {
  it('shows the calls made before a restart, with who decided and who answered, and filters them by tool, outcome and user', async () => {
    const first = await startApp()
    expect(await first.call('echo', { text: 'hello' }, 'alice')).toMatchObject({ status: 'ok', content: 'hello' })
    expect(await first.call('deploy', { env: 'staging' }, 'bob', { decision: 'allow', scope: 'session' })).toMatchObject({ status: 'ok' })
    expect(await first.call('deploy', { env: 'prod' }, 'carol', { decision: 'deny' })).toMatchObject({ status: 'denied' })
    expect(await first.call('purge', {}, 'alice')).toMatchObject({ status: 'denied' })
    expect(await first.call('echo', { text: 42 }, 'bob')).toMatchObject({ status: 'error' })
    await first.stop()

    // A new app on the same folder: its live log is empty, its audit log is not.
    const second = await startApp()
    const page = await context.newPage()
    try {
      await page.goto(second.base)
      await page.click('[data-test=tab-log]')
      const all = [
        ['echo', 'error', 'webui:bob', 'ended before any permission check (invalid_arguments)', ''],
        ['purge', 'denied', 'webui:alice', 'rule "never purge" from config.rules[0]: deny', ''],
        ['deploy', 'denied', 'webui:carol', 'default for write tools', 'deny by webui · via console · once'],
        ['deploy', 'ok', 'webui:bob', 'default for write tools', 'allow by webui · via console · this session'],
        ['echo', 'ok', 'webui:alice', 'default for read tools', ''],
      ]
      await expectRows(page, all)
      expect(await page.innerText('[data-test=live-log]')).toContain('Nothing logged yet.')
      // Why a call failed or was denied: its code in words (the code itself in data-code), and a denial's reason.
      expect(await page.locator('[data-test=audit-code]').allInnerTexts()).toEqual(['invalid arguments', 'permission denied', 'permission denied'])
      expect(await page.locator('[data-test=audit-code]').evaluateAll((cells) => cells.map((cell) => cell.getAttribute('data-code')))).toEqual(['invalid_arguments', 'permission_denied', 'permission_denied'])
      expect(await page.locator('[data-test=audit-reason]').allInnerTexts()).toEqual(['rule "never purge" from config.rules[0] denies it', 'webui declined it'])
      // Whose session it was, under the caller.
      expect(await page.locator('[data-test=audit-caller]').first().innerText()).toBe('webui:bob\nsession chan-bob')
      // Each row says when, how long, and keeps its arguments folded until asked.
      const times = await page.locator('[data-test=audit-timing]').allInnerTexts()
      expect(times[3]).toMatch(/^ran \d+ ms · waited \d+(\.\d)? (ms|s)$/)
      expect(times[4]).toMatch(/^ran \d+ ms$/)
      expect(await page.locator('[data-test=audit-args]').count()).toBe(0)
      await page.locator('[data-test=audit-row]').nth(3).locator('[data-test=audit-args-toggle]').click()
      expect(JSON.parse(await page.innerText('[data-test=audit-args]'))).toEqual({ env: 'staging' })
      await screenshot(page, 'webui-audit')

      await page.fill('[data-test=audit-tool]', 'deploy')
      await expectRows(page, all.slice(2, 4))
      await page.selectOption('[data-test=audit-outcome]', 'denied')
      await expectRows(page, all.slice(2, 3))
      await page.fill('[data-test=audit-tool]', '')
      await expectRows(page, all.slice(1, 3))
      await page.fill('[data-test=audit-user]', 'webui:alice')
      await expectRows(page, all.slice(1, 2))
      await page.selectOption('[data-test=audit-outcome]', '')
      await expectRows(page, [all[1], all[4]])
      // A user id alone matches on any platform; nobody's records: the view says so.
      await page.fill('[data-test=audit-user]', 'carol')
      await expectRows(page, [all[2]])
      await page.fill('[data-test=audit-user]', 'dave')
      await page.waitForSelector('[data-test=audit-none]')
      expect(await page.innerText('[data-test=audit-none]')).toBe('No audit records match.')
      expect(await rows(page)).toEqual([])

      // A call made now shows up on top, without a reload.
      await page.fill('[data-test=audit-user]', '')
      await expectRows(page, all)
      expect(await second.call('echo', { text: 'again' }, 'erin')).toMatchObject({ status: 'ok' })
      await expectRows(page, [['echo', 'ok', 'webui:erin', 'default for read tools', ''], ...all])
    } finally {
      await page.close()
    }
  })

  it('pages back through older records with "Older records"', async () => {
    const app = await startApp()
    for (let i = 0; i < 55; i++) expect(await app.call('echo', { text: `n${i}` }, 'alice')).toMatchObject({ status: 'ok' })
    const page = await context.newPage()
    try {
      await page.goto(app.base)
      await page.click('[data-test=tab-log]')
      await expect.poll(() => page.locator('[data-test=audit-row]').count()).toBe(50)
      await page.click('[data-test=audit-more]')
      await expect.poll(() => page.locator('[data-test=audit-row]').count()).toBe(55)
      expect(await page.locator('[data-test=audit-more]').count()).toBe(0)
      await page.locator('[data-test=audit-row]').nth(54).locator('[data-test=audit-args-toggle]').click()
      expect(JSON.parse(await page.innerText('[data-test=audit-args]'))).toEqual({ text: 'n0' })
    } finally {
      await page.close()
    }
  })

  it('says so when no audit service is loaded, and keeps the live log', async () => {
    const app = await startApp({ audit: false })
    expect(await app.call('echo', { text: 'hello' }, 'alice')).toMatchObject({ status: 'ok' })
    const page = await context.newPage()
    try {
      await page.goto(app.base)
      await page.click('[data-test=tab-log]')
      await page.waitForSelector('[data-test=audit-unavailable]')
      expect(await page.innerText('[data-test=audit-unavailable]')).toBe('No audit service is loaded, so there is no audit log to show.')
      expect(await page.locator('[data-test=audit-error]').count()).toBe(0)
      await expect.poll(() => page.locator('[data-test=live-log] [data-test=log-kind]').count()).toBeGreaterThan(0)
    } finally {
      await page.close()
    }
  })

  it('speaks Chinese', async () => {
    const zh = await openBrowser({ locale: 'zh-CN' })
    const app = await startApp()
    expect(await app.call('deploy', { env: 'staging' }, 'bob', { decision: 'allow', scope: 'once' })).toMatchObject({ status: 'ok' })
    expect(await app.call('purge', {}, 'alice')).toMatchObject({ status: 'denied' })
    const page = await zh.context.newPage()
    try {
      await page.goto(app.base)
      await page.click('[data-test=tab-log]')
      await expectRows(page, [
        ['purge', '被拒绝', 'webui:alice', '规则“never purge”（config.rules[0]）：拒绝', ''],
        ['deploy', '成功', 'webui:bob', '写入工具的默认规则', 'webui 允许 · 通过控制台 · 仅此一次'],
      ])
      await screenshot(page, 'webui-audit.zh-CN')
    } finally {
      await page.close()
      await zh.close()
    }
  })
})
