// McpClientPlugin.ready: the documented way to wait until the imported tools are defined,
// against the repo's test servers (odd-server, server-everything), and the waits that must
// end: a server that never connects (the timeout), one that never answers (disposal), a signal.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { Context } from 'cordis'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { McpClientPlugin, McpError } from '../src'
import { alive, childrenMatching, doguApp, everything } from './client-harness'

const odd = { command: process.execPath, args: [resolve(import.meta.dirname, 'fixtures/odd-server.mjs')] }
/** What Dogu says each time it lists the odd server's tools: one of them has a schema it refuses. */
const REFUSED = '[dogu-mcp-client] MCP server "odd": skipped tool refused'
/** A command that is not there: every attempt fails at once, and the plugin keeps retrying. */
const ghost = { command: '/nonexistent/dogu-mcp-ghost' }
/** A process that never answers `initialize`: the first attempt never ends. */
const MUTE = 'dogu-mcp-mute-server'
const mute = { command: process.execPath, args: ['-e', `/* ${MUTE} */ setInterval(() => {}, 60_000)`] }
// Retries start at once and stay few: each one logs a warning.
const fast = { initialDelay: 10, maxDelay: 500 }

function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(() => { throw new Error('expected the wait to fail') }, (error: unknown) => error)
}

describe('McpClientPlugin.ready', () => {
  let dir: string
  let ctx: Context

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-ready-'))
    ctx = await doguApp(dir, [{ permission: 'tool:odd_*', decision: 'allow' }, { permission: 'tool:everything_*', decision: 'allow' }])
  })
  afterEach(async () => {
    await ctx.fiber.dispose()
    await rm(dir, { recursive: true, force: true })
  })

  it('resolves once every server is connected and its tools are defined, with their names; a call works at once', async () => {
    guardLogs(ctx).expect(REFUSED)
    await ctx.plugin(McpClientPlugin as any, { servers: { odd, everything: everything() } })
    // Loading does not wait for the servers: their processes are only starting.
    expect(ctx.tools.get('odd_toggle')).toBeUndefined()
    const tools = await McpClientPlugin.ready(ctx, { timeout: 30_000 })
    expect(tools).toEqual([...tools].sort())
    expect(tools).toEqual(expect.arrayContaining(['odd_dotted_name_with_spaces', 'odd_toggle', 'everything_echo', 'everything_get-sum']))
    for (const name of tools) expect(ctx.tools.get(name), name).toBeDefined()
    expect(ctx.tools.sources().map(({ name, status }) => [name, status])).toEqual([['everything', 'connected'], ['odd', 'connected']])
    const [sum] = await ctx.tools.execute([{ id: '1', name: 'everything_get-sum', arguments: { a: 2, b: 3 } }], { session: { id: 's' } })
    expect(sum).toMatchObject({ status: 'ok', content: 'The sum of 2 and 3 is 5.' })
    // Connected already: it resolves again, with the same tools.
    expect(await McpClientPlugin.ready(ctx)).toEqual(tools)
  })

  it('servers: waits for those named only, while another never connects; a name not imported is refused at once', async () => {
    const guard = guardLogs(ctx)
    guard.expect(REFUSED)
    guard.expect(/\[dogu-mcp-client\] MCP server "ghost": cannot connect: /)
    await ctx.plugin(McpClientPlugin as any, { servers: { odd, ghost }, reconnect: fast })
    const tools = await McpClientPlugin.ready(ctx, { servers: ['odd'], timeout: 30_000 })
    expect(tools).toContain('odd_toggle')
    expect(tools.every((name) => name.startsWith('odd_'))).toBe(true)
    const refused = await rejection(McpClientPlugin.ready(ctx, { servers: ['odd', 'memory'] }))
    expect(McpError.is(refused, 'INVALID_OPTIONS')).toBe(true)
    expect((refused as Error).message).toBe('ready(): no MCP server named "memory" is imported here (imported: ghost, odd)')
  })

  it('a server that never connects: the timeout ends the wait, naming it, its status and why', async () => {
    guardLogs(ctx).expect(/\[dogu-mcp-client\] MCP server "ghost": cannot connect: .*ENOENT/)
    await ctx.plugin(McpClientPlugin as any, { servers: { ghost }, reconnect: fast })
    const source = () => ctx.tools.sources().find((s) => s.name === 'ghost')!
    // Its first attempt has failed: from now on it is retrying, and says why.
    await expect.poll(() => source().status).toBe('reconnecting')
    const error = await rejection(McpClientPlugin.ready(ctx, { timeout: 300 }))
    expect(McpError.is(error, 'NOT_CONNECTED')).toBe(true)
    expect((error as Error).message).toBe(`MCP server "ghost" did not connect within 300 ms (reconnecting: ${source().lastError})`)
    expect(source().lastError).toMatch(/ENOENT/)
  })

  it('several not connected: the timeout names each', async () => {
    guardLogs(ctx).expect(/\[dogu-mcp-client\] MCP server "ghost": cannot connect: /)
    await ctx.plugin(McpClientPlugin as any, { servers: { ghost, mute }, reconnect: fast })
    await expect.poll(() => ctx.tools.sources().find((s) => s.name === 'ghost')!.status).toBe('reconnecting')
    const error = await rejection(McpClientPlugin.ready(ctx, { timeout: 1000 }))
    expect((error as Error).message).toMatch(/^MCP servers did not connect within 1 s: "ghost" \(reconnecting: .*ENOENT.*\), "mute" \(connecting\)$/)
  })

  it('a server that never answers: disposing the plugin ends the wait with CLOSED, and its process is gone', async () => {
    const fiber = ctx.plugin(McpClientPlugin as any, { servers: { mute } })
    await fiber
    await expect.poll(() => childrenMatching(MUTE).length).toBe(1)
    const [pid] = childrenMatching(MUTE)
    const waiting = rejection(McpClientPlugin.ready(ctx, { timeout: 60_000 }))
    await fiber.dispose()
    const error = await waiting
    expect(McpError.is(error, 'CLOSED')).toBe(true)
    expect((error as Error).message).toBe('MCP server "mute" was closed before it connected: its plugin was disposed')
    expect(alive(pid)).toBe(false)
  })

  it('a signal ends the wait with its reason', async () => {
    await ctx.plugin(McpClientPlugin as any, { servers: { mute } })
    const controller = new AbortController()
    const waiting = rejection(McpClientPlugin.ready(ctx, { signal: controller.signal }))
    controller.abort(new Error('the user gave up'))
    expect(await waiting).toMatchObject({ message: 'the user gave up' })
    const aborted = await rejection(McpClientPlugin.ready(ctx, { signal: AbortSignal.abort(new Error('already')) }))
    expect(aborted).toMatchObject({ message: 'already' })
  })

  it('bad use is refused at once: no MCP server imported, no tools service, a timeout that is not a positive number', async () => {
    const none = await rejection(McpClientPlugin.ready(ctx))
    expect(McpError.is(none, 'INVALID_OPTIONS')).toBe(true)
    expect((none as Error).message).toBe('ready(): no MCP server is imported here: load McpClientPlugin with servers, and await ctx.plugin(…), before ready()')
    const named = await rejection(McpClientPlugin.ready(ctx, { servers: ['odd'] }))
    expect((named as Error).message).toBe('ready(): no MCP server named "odd" is imported here (none is imported yet: await ctx.plugin(McpClientPlugin, …) before ready())')
    const bare = new Context()
    expect((await rejection(McpClientPlugin.ready(bare as any)) as Error).message).toBe('ready(): ctx.tools is not loaded: load Dogu (@dogu/cordis, or koishi-plugin-dogu) before McpClientPlugin')
    for (const timeout of [0, -1, Number.NaN, Infinity, '5' as unknown as number]) {
      const error = await rejection(McpClientPlugin.ready(ctx, { timeout }))
      expect(McpError.is(error, 'INVALID_OPTIONS'), String(timeout)).toBe(true)
      expect((error as Error).message).toMatch(/^ready\(\): timeout must be a positive number of milliseconds, got /)
    }
  })
})
