import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { ToolService } from '@dogu/cordis'
import { Context } from 'cordis'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { importedName, McpClientConnection, McpClientPlugin, McpError } from '../src'
import { alive, childrenMatching, connect, doguApp } from './client-harness'

const ODD = resolve(import.meta.dirname, 'fixtures/odd-server.mjs')
const odd = { command: process.execPath, args: [ODD] }
/** What Dogu says each time it lists the odd server's tools: one of them has a schema it refuses. */
const REFUSED = 'MCP server "odd": skipped tool refused: "if" has no schemastery form (at $.if)'

/** Resolves once `check` holds after a `tools/changed`; rejects after 10 s. */
function changedUntil(ctx: Context, check: () => boolean): Promise<void> {
  if (check()) return Promise.resolve()
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { off(); reject(new Error('tools did not change as expected within 10 s')) }, 10_000)
    const off = ctx.on('tools/changed', () => {
      if (!check()) return
      clearTimeout(timer)
      off()
      resolve()
    })
  })
}

describe('Dogu client: names, refused schemas, list_changed, disposal', () => {
  let dir: string
  let ctx: Context

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-odd-'))
    ctx = await doguApp(dir, [{ permission: 'tool:odd_*', decision: 'allow' }])
  })
  afterEach(async () => {
    await ctx.fiber.dispose()
    await rm(dir, { recursive: true, force: true })
  })

  it('names tools <server>_<tool> within the name rule; a refused schema is reported and skipped', async () => {
    const warnings: string[] = []
    const connection = new McpClientConnection({ name: 'odd', server: odd, define: (tool) => ctx.tools.define(tool), logger: { debug() {}, warn: (format, ...args) => warnings.push([format, ...args].join(' | ')) } })
    connection.start()
    try {
      await connection.connected(AbortSignal.timeout(20_000))
      const long = importedName('odd', 'a'.repeat(70))
      expect(long).toMatch(/^odd_a{51}_[0-9a-f]{8}$/)
      expect(connection.tools).toEqual([long, 'odd_dotted_name_with_spaces', 'odd_hang', 'odd_toggle'])
      expect(connection.skipped).toEqual([{ tool: 'refused', reason: expect.stringContaining('$.if') }])
      expect(warnings).toEqual([expect.stringMatching(/^MCP server "%s": skipped tool %s: %s \| odd \| refused \| /)])
      const [result] = await ctx.tools.execute([{ id: '1', name: 'odd_dotted_name_with_spaces', arguments: {} }], { session: { id: 's' } })
      expect(result).toMatchObject({ status: 'ok', content: 'called dotted.name with spaces' })
    } finally {
      await connection.close()
    }
  })

  it('follows list_changed: a tool the server adds appears, and goes when removed', async () => {
    guardLogs(ctx).expect(`[app] ${REFUSED}`)
    const connection = connect(ctx, 'odd', odd)
    try {
      await connection.connected(AbortSignal.timeout(20_000))
      const run = async () => (await ctx.tools.execute([{ id: '1', name: 'odd_toggle', arguments: {} }], { session: { id: 's' } }))[0].content
      const toggle = ctx.tools.get('odd_toggle')
      expect(await run()).toBe('added')
      await changedUntil(ctx, () => !!ctx.tools.get('odd_late'))
      // An unchanged tool is not redefined (a redefinition would abort its calls in flight).
      expect(ctx.tools.get('odd_toggle')).toBe(toggle)
      expect(await run()).toBe('removed')
      await changedUntil(ctx, () => !ctx.tools.get('odd_late'))
    } finally {
      await connection.close()
    }
  })

  it('a server that sends neither a result nor progress within requestTimeout: the call ends as an error saying so', async () => {
    guardLogs(ctx).expect(`[app] ${REFUSED}`)
    const connection = connect(ctx, 'odd', { ...odd, requestTimeout: 50 })
    try {
      await connection.connected(AbortSignal.timeout(20_000))
      const [result] = await ctx.tools.execute([{ id: '1', name: 'odd_hang', arguments: {} }], { session: { id: 's' } })
      expect(result).toMatchObject({ status: 'error', code: 'tool_error', content: 'Error: the MCP server "odd" sent neither a result nor progress for 50 ms' })
    } finally {
      await connection.close()
    }
  })

  it('bad config is a clear error', () => {
    const define = () => () => {}
    expect(() => new McpClientConnection({ name: 'a_b', server: odd, define })).toThrow('MCP server name "a_b" must match /^[a-zA-Z0-9-]{1,32}$/')
    expect(() => new McpClientConnection({ name: 'x', server: { ...odd, url: 'http://localhost/mcp' } as any, define })).toThrow('servers.x needs exactly one of "command" (stdio) and "url" (Streamable HTTP)')
    expect(() => new McpClientConnection({ name: 'x', server: { url: 'not a url' }, define })).toSatisfy((fn: () => unknown) => {
      try { fn() } catch (error) { return McpError.is(error, 'INVALID_OPTIONS') }
      return false
    })
  })
})

describe('McpClientPlugin: a Cordis plugin', () => {
  it('imports while loaded; disposal removes the tools and leaves no child process', async () => {
    const ctx = new Context()
    guardLogs(ctx).expect(`[dogu-mcp-client] ${REFUSED}`)
    await ctx.plugin(ToolService)
    const fiber = ctx.plugin(McpClientPlugin as any, { servers: { odd } })
    await fiber
    await changedUntil(ctx, () => !!ctx.tools.get('odd_toggle'))
    const pids = childrenMatching(ODD)
    expect(pids).toHaveLength(1)
    await fiber.dispose()
    expect(ctx.tools.get('odd_toggle')).toBeUndefined()
    expect(alive(pids[0])).toBe(false)
    expect(childrenMatching(ODD)).toEqual([])
    await ctx.fiber.dispose()
  })
})
