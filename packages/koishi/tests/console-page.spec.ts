import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ToolResult } from '@dogu/core'
import type { Client } from '@koishijs/console'
import { afterEach, describe, expect, it } from 'vitest'
import { AuditService } from '../src'
import { auditCommand } from '../src/audit-command'
import { ConsolePageConfig } from '../src/console-page'
import { descriptions, inBothLanguages } from './chat-harness'
import { AuthPlugin, consoleApp, ConsolePlugin, DIST, ServerPlugin } from './console-app'
import { koishiApp, settle } from './koishi-app'

let t: Awaited<ReturnType<typeof consoleApp>> | undefined
let dir: string | undefined
afterEach(async () => {
  await t?.dispose()
  t = undefined
  if (dir) await rm(dir, { recursive: true, force: true })
  dir = undefined
})

/** A console client as plugin-auth leaves it: logged in as `name` with `authority`, or not logged in. */
const client = (auth?: { name: string; authority: number }) =>
  (auth ? { auth: { id: 7, token: 'x', expiredAt: Date.now() + 60_000, config: {}, ...auth } } : {}) as unknown as Client

/** Calls a console listener as `from` would, through the console's own checks (plugin-auth's intercept). */
async function send(method: string, payload: unknown, from = client()) {
  const listener = t!.app.console.listeners[`dogu/${method}`]
  if (!listener) throw new Error(`no console listener dogu/${method}`)
  if (await t!.app.serial('console/intercept', from, listener)) return 'unauthorized'
  return listener.callback.call(from, payload)
}

describe('the Dogu page in Koishi\'s console', () => {
  it('is registered as a console entry whose built files exist, and served by the console', async () => {
    t = await consoleApp()
    const entries = Object.entries(t.app.console.entries)
    const [key, entry] = entries.find(([, entry]) => typeof entry.files === 'object' && !Array.isArray(entry.files) && String(entry.files.prod).endsWith('koishi-plugin-dogu/dist'))!
    expect(existsSync(join(DIST, 'index.js'))).toBe(true)
    expect(existsSync(join(DIST, 'style.css'))).toBe(true)
    // What the console's page loads: the entry's script (its imports bound to the console's Vue) and styles.
    const script = await fetch(`${t.base}/@plugin-${key}/index.js`)
    expect(script.status).toBe(200)
    const source = await script.text()
    expect(source).toContain('dogu/')
    expect(source).not.toMatch(/from\s*"vue"/)
    const style = await fetch(`${t.base}/@plugin-${key}/style.css`)
    expect(style.status).toBe(200)
    expect(await style.text()).toContain('.dogu-koishi')
    expect(entry.ctx.name).toBe('dogu-console')
  })

  it('comes with Dogu once the console is loaded, from this package\'s dist; off when disabled', async () => {
    const { app, dogu } = await koishiApp()
    expect(app.get('console')).toBeUndefined()
    app.plugin(ServerPlugin, { host: '127.0.0.1', port: 0 })
    app.plugin(ConsolePlugin, { devMode: false, open: false })
    await settle(app)
    const entries = Object.values(app.console.entries).filter((entry) => entry.ctx.name === 'dogu-console')
    expect(entries.map((entry) => entry.files)).toEqual([{ dev: join(DIST, '../client/index.ts'), prod: DIST }])
    expect(Object.keys(app.console.listeners).filter((name) => name.startsWith('dogu/')).sort()).toEqual([
      'dogu/approvals.answer', 'dogu/approvals.list', 'dogu/approvals.resolve', 'dogu/audit.list', 'dogu/call', 'dogu/changes.list', 'dogu/changes.undo', 'dogu/definitions',
      'dogu/grants.list', 'dogu/grants.revoke', 'dogu/log.list', 'dogu/modes.get', 'dogu/modes.set', 'dogu/quotas.list',
      'dogu/sources.authorize', 'dogu/sources.complete', 'dogu/sources.list', 'dogu/tasks.cancel',
      'dogu/tasks.list', 'dogu/tasks.wait', 'dogu/tools.list', 'dogu/tools.search',
    ])
    // Unloading Dogu takes the page and every listener away.
    dogu!.dispose()
    await settle(app)
    expect(Object.values(app.console.entries).filter((entry) => entry.ctx.name === 'dogu-console')).toEqual([])
    expect(Object.keys(app.console.listeners).filter((name) => name.startsWith('dogu/'))).toEqual([])
    const { app: off } = await koishiApp({ dogu: { console: { enabled: false } } })
    off.plugin(ServerPlugin, { host: '127.0.0.1', port: 0 })
    off.plugin(ConsolePlugin, { devMode: false, open: false })
    await settle(off)
    expect(Object.values(off.console.entries).filter((entry) => entry.ctx.name === 'dogu-console')).toEqual([])
    expect(Object.keys(off.console.listeners).filter((name) => name.startsWith('dogu/'))).toEqual([])
  })

  it('is configured in Chinese and English', () => {
    expect(ConsolePageConfig({})).toEqual({ enabled: true, authority: 4, logSize: 200 })
    expect(descriptions(ConsolePageConfig)).toEqual(inBothLanguages(['$', '$.enabled', '$.authority', '$.logSize']))
  })

  it('answers every method of the page\'s API as a listener; a refusal comes back as data', async () => {
    t = await consoleApp()
    const tools = await send('tools.list', {}) as { value: { name: string }[] }
    expect(tools.value.map((tool) => tool.name).sort()).toEqual(['deploy', 'echo', 'task_cancel', 'task_status'])
    expect(await send('call', { tool: 'echo', args: {}, sessionId: 'console' })).toMatchObject({
      value: { result: { status: 'error' } },
    })
    // The live log saw the call (Dogu's events on Koishi) and the refusal it ended in.
    const log = await send('log.list', {}) as { value: { kind: string; tool: string; status?: string }[] }
    expect(log.value.filter((entry) => entry.kind.startsWith('call-')).map(({ kind, tool, status }) => ({ kind, tool, status }))).toEqual([
      { kind: 'call-start', tool: 'echo', status: undefined },
      { kind: 'call-end', tool: 'echo', status: 'error' },
    ])
    expect(await send('grants.revoke', { id: 'nope' })).toEqual({ error: { code: 'NOT_FOUND', message: 'no grant with id nope' } })
    expect(await send('approvals.answer', { id: 'x', decision: 'maybe' })).toMatchObject({ error: { code: 'INVALID_PAYLOAD' } })
  })

  it('runs calls with the operator\'s console authority, never the impersonated user\'s', async () => {
    t = await consoleApp({ database: true })
    t.app.plugin(AuthPlugin, { admin: { enabled: false } })
    await t.settle()
    // admin has authority 4 in the chat; the console operator logged in with 4, and alice has 1.
    const reply = await send('call', { tool: 'echo', args: { text: 'hi' }, sessionId: 'mock:room', userId: 'admin' }, client({ name: 'op', authority: 4 })) as { value: { result: ToolResult; session: unknown } }
    expect(reply.value.result.content).toBe('hi (as authority 4)')
    expect(reply.value.session).toEqual({ id: 'mock:room', userId: 'admin', platform: 'webui', authority: 4 })
  })

  it('with plugin-auth, a console user below the page\'s authority is refused, and no one logged out gets in', async () => {
    t = await consoleApp({ database: true })
    t.app.plugin(AuthPlugin, { admin: { enabled: false } })
    await t.settle()
    expect(await send('tools.list', {}, client({ name: 'guest', authority: 3 }))).toBe('unauthorized')
    expect(await send('tools.list', {}, client())).toBe('unauthorized')
    expect(await send('call', { tool: 'echo', args: { text: 'x' }, sessionId: 's' }, client({ name: 'guest', authority: 3 }))).toBe('unauthorized')
    expect(t.app.get('console')!.listeners['dogu/call'].authority).toBe(4)
  })

  it('answers a question as the logged-in operator; the first answer wins and the chat question closes', async () => {
    t = await consoleApp()
    t.app.plugin(AuthPlugin, { admin: { enabled: false } })
    dir = await mkdtemp(join(tmpdir(), 'dogu-koishi-console-page-'))
    t.app.plugin(AuditService, { storePath: join(dir, 'audit.jsonl') })
    t.app.plugin({ name: 'dogu-audit-command', inject: ['audit'], apply: auditCommand }, {})
    await t.settle()
    const result = t.app.tools.execute([{ id: 'call-1', name: 'deploy', arguments: { env: 'prod' } }], { session: t.session('alice') }).then(([r]) => r)
    await t.outbox.next()
    const listed = await send('approvals.list', {}, client({ name: 'op', authority: 4 })) as { value: { id: string; summary: string }[] }
    expect(listed.value.map((request) => request.summary)).toEqual(['deploy(env=prod)'])
    const decisions: unknown[] = []
    t.app.on('permissions/decision', (event) => { if (event.source.kind === 'answer') decisions.push(event.source.by) })
    expect(await send('approvals.answer', { id: listed.value[0].id, decision: 'allow' }, client({ name: 'op', authority: 4 }))).toEqual({ value: { status: 'accepted' } })
    expect((await result).status).toBe('ok')
    // The login name on platform `console`: written as platform:id, it reads console:op (never console:console:op).
    expect(decisions).toEqual([{ id: 'op', platform: 'console', authority: 4 }])
    expect((await t.outbox.next()).text).toBe('[1] deploy(env=prod)：已由 console:op 处理（仅此一次）。')
    const [line] = await t.client('admin').receive('dogu.audit -n 1')
    expect(line).toContain('mock:alice deploy：成功')
    expect(line).toContain('console:op 通过控制台答复允许')
    expect(line).not.toContain('console:console')
    // The chat question is closed: alice's "y" now goes on to the bot.
    expect(await t.client('alice').receive('y')).toEqual([])
    expect(t.passed).toEqual(['alice: y'])
    expect(await send('approvals.answer', { id: listed.value[0].id, decision: 'deny' }, client({ name: 'op', authority: 4 }))).toEqual({
      error: { code: 'NOT_FOUND', message: `question ${listed.value[0].id} is not waiting: it was answered elsewhere, timed out or never existed` },
    })
  })
})
