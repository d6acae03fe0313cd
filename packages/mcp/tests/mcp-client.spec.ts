import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { CallInfo, PermissionRequest, ToolResult } from '@dogu/core'
import { convertToDialect, type Dialect, toJsonSchema } from '@dogu/schema'
import type { Context } from 'cordis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import type { McpClientConnection } from '../src'
import { alive, connect, doguApp, everything, serverEntry } from './client-harness'

const DIALECTS: Dialect[] = ['json', 'openai', 'anthropic', 'gemini']
const session = { id: 'cli', userId: 'alice' }

async function call(ctx: Context, name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolResult> {
  const [result] = await ctx.tools.execute([{ id: 'c1', name, arguments: args }], { session, signal })
  return result
}

describe('Dogu client: @modelcontextprotocol/server-everything', () => {
  let dir: string
  let ctx: Context
  let server: McpClientConnection

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-client-'))
    ctx = await doguApp(dir, [{ permission: 'tool:everything_*', decision: 'allow' }, { permission: 'tool:quick_*', decision: 'allow' }])
    server = connect(ctx, 'everything', everything())
    await server.connected(AbortSignal.timeout(20_000))
  })
  afterAll(async () => {
    await server?.close()
    await ctx?.fiber.dispose()
    await rm(dir, { recursive: true, force: true })
  })

  it('imports its tools as <server>_<tool>, all exec since the server is not trusted; sampling is not offered', () => {
    expect(server.tools).toEqual(expect.arrayContaining(['everything_echo', 'everything_get-sum', 'everything_trigger-long-running-operation', 'everything_trigger-elicitation-request']))
    expect(server.tools).not.toContain('everything_trigger-sampling-request')
    expect(server.skipped).toEqual([])
    for (const name of server.tools) expect(ctx.tools.get(name)!.traits.effect).toBe('exec')
  })

  it('every imported schema converts to every dialect', () => {
    const toolset = ctx.tools.toolset({ session, include: ['everything_*'] })
    for (const dialect of DIALECTS) expect(toolset.definitions(dialect)).toHaveLength(server.tools.length)
    for (const name of server.tools) {
      const json = toJsonSchema(ctx.tools.get(name)!.args)
      for (const dialect of DIALECTS) expect(() => convertToDialect(json, dialect), `${name} in ${dialect}`).not.toThrow()
    }
  })

  it('calls a tool', async () => {
    expect(await call(ctx, 'everything_echo', { message: 'hi' })).toMatchObject({ status: 'ok', content: 'Echo: hi' })
    expect(await call(ctx, 'everything_get-sum', { a: 2, b: 3 })).toMatchObject({ status: 'ok', content: 'The sum of 2 and 3 is 5.' })
  })

  it('argument errors: Dogu refuses them before the server sees them, naming the path', async () => {
    const result = await call(ctx, 'everything_get-sum', { a: 'two', b: 3 })
    expect(result).toMatchObject({ status: 'error', code: 'invalid_arguments' })
    expect(result.content).toContain('$.a')
  })

  it('forwards progress as tools/call-progress', async () => {
    const messages: string[] = []
    const off = ctx.on('tools/call-progress', (_info: CallInfo, message: string) => { messages.push(message) })
    const result = await call(ctx, 'everything_trigger-long-running-operation', { duration: 0.3, steps: 3 })
    off()
    expect(result).toMatchObject({ status: 'ok', content: 'Long running operation completed. Duration: 0.3 seconds, Steps: 3.' })
    // The SDK handles notifications a microtask later than responses, so the last step's
    // progress, sent just before the result, may come after it and be dropped.
    expect(messages.slice(0, 2)).toEqual(['1/3', '2/3'])
  })

  it('abort: a cancelled call ends cancelled; Dogu\'s own timeout ends timed_out, though the SDK reports both alike', async () => {
    const controller = new AbortController()
    const off = ctx.on('tools/call-progress', () => controller.abort())
    const cancelled = await call(ctx, 'everything_trigger-long-running-operation', { duration: 60, steps: 600 }, controller.signal)
    off()
    expect(cancelled).toMatchObject({ status: 'cancelled', code: 'cancelled' })

    const quick = connect(ctx, 'quick', everything({ timeout: 300 }))
    try {
      await quick.connected(AbortSignal.timeout(20_000))
      const timedOut = await call(ctx, 'quick_trigger-long-running-operation', { duration: 60, steps: 2 })
      expect(timedOut).toMatchObject({ status: 'timed_out', code: 'timed_out' })
    } finally {
      await quick.close()
    }
  })

  it('the server\'s elicitation tool: its form (every SEP-1330 enum kind) goes to Dogu\'s askers; the answer goes back with the defaults', async () => {
    const shown: PermissionRequest[] = []
    const off = ctx.permissions.asker((request) => {
      if (request.kind !== 'elicitation') return
      shown.push(request)
      return { decision: 'allow', value: { name: 'Ada Lovelace', check: true }, by: 'alice' }
    })
    const result = await call(ctx, 'everything_trigger-elicitation-request', {})
    off()
    expect(result.status).toBe('ok')
    expect(result.content).toContain('- Name: Ada Lovelace\n- Agreed to terms: true\n- Favorite Integer: 42\n- Favorite Number: 3.14')
    expect(JSON.parse(result.content.slice(result.content.indexOf('Raw result: ') + 12))).toEqual({
      action: 'accept',
      content: {
        name: 'Ada Lovelace',
        check: true,
        firstLine: 'It was a dark and stormy night.',
        integer: 42,
        number: 3.14,
        untitledSingleSelectEnum: 'Monica',
        untitledMultipleSelectEnum: ['Guitar'],
        titledSingleSelectEnum: 'hero-1',
        titledMultipleSelectEnum: ['fish-1'],
        legacyTitledEnum: 'pet-1',
      },
    })
    expect(shown[0]!.input!.requestedSchema!.properties.legacyTitledEnum).toMatchObject({ enum: ['pet-1', 'pet-2', 'pet-3', 'pet-4', 'pet-5'], enumNames: ['Cats', 'Dogs', 'Birds', 'Fish', 'Reptiles'] })
  })

  it('the server\'s elicitation with nobody to ask is cancelled', async () => {
    const result = await call(ctx, 'everything_trigger-elicitation-request', {})
    expect(result.status).toBe('ok')
    expect(result.content).toContain('User cancelled the elicitation dialog')
  })

  it('a dropped connection reconnects with backoff; close ends the process', async () => {
    const pid = server.pid!
    guardLogs(ctx).expect('[app] MCP server "everything": the connection dropped; reconnecting')
    process.kill(pid, 'SIGKILL')
    await new Promise<void>((resolve) => { const poll = () => (server.status === 'connected' && server.pid !== pid ? resolve() : setTimeout(poll, 5)); poll() })
    expect(server.pid).not.toBe(pid)
    expect(await call(ctx, 'everything_echo', { message: 'back' })).toMatchObject({ status: 'ok', content: 'Echo: back' })
    const current = server.pid!
    await server.close()
    expect(alive(current)).toBe(false)
    expect(ctx.tools.get('everything_echo')).toBeUndefined()
  })
})

describe('Dogu client: server-filesystem on a temp root, trusted', () => {
  let dir: string
  let root: string
  let ctx: Context
  let fs: McpClientConnection

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-fs-'))
    root = await mkdtemp(join(tmpdir(), 'dogu-mcp-root-'))
    await writeFile(join(root, 'hello.txt'), 'hello from the root\n')
    ctx = await doguApp(dir, [{ permission: 'tool:fs_write_file', decision: 'allow' }])
    fs = connect(ctx, 'fs', { command: process.execPath, args: [serverEntry('@modelcontextprotocol/server-filesystem'), root], trusted: true })
    await fs.connected(AbortSignal.timeout(20_000))
  })
  afterAll(async () => {
    await fs?.close()
    await ctx?.fiber.dispose()
    await rm(dir, { recursive: true, force: true })
    await rm(root, { recursive: true, force: true })
  })

  it('a trusted server\'s annotations set the effect: read-only → read, closed-world → write', () => {
    expect(ctx.tools.get('fs_read_text_file')!.traits).toMatchObject({ effect: 'read', parallel: true })
    expect(ctx.tools.get('fs_write_file')!.traits).toMatchObject({ effect: 'write', parallel: false })
    expect(fs.skipped).toEqual([])
  })

  it('every imported schema converts to every dialect', () => {
    for (const name of fs.tools) {
      const json = toJsonSchema(ctx.tools.get(name)!.args)
      for (const dialect of DIALECTS) expect(() => convertToDialect(json, dialect), `${name} in ${dialect}`).not.toThrow()
    }
  })

  it('reads and writes inside the root; outside it the server\'s error is an error result', async () => {
    expect(await call(ctx, 'fs_read_text_file', { path: join(root, 'hello.txt') })).toMatchObject({ status: 'ok', content: 'hello from the root\n' })
    expect(await call(ctx, 'fs_write_file', { path: join(root, 'new.txt'), content: 'written' })).toMatchObject({ status: 'ok' })
    expect(await readFile(join(root, 'new.txt'), 'utf8')).toBe('written')
    const outside = await call(ctx, 'fs_read_text_file', { path: '/etc/hostname' })
    expect(outside).toMatchObject({ status: 'error', code: 'tool_error' })
    expect(outside.content).toMatch(/^Error: .*Access denied - path outside allowed directories/)
  })

  it('a write without a rule asks, and with no asker it is denied', async () => {
    const result = await call(ctx, 'fs_create_directory', { path: join(root, 'sub') })
    expect(result).toMatchObject({ status: 'denied', code: 'permission_denied' })
  })
})

describe('Dogu client: server-memory', () => {
  let dir: string
  let ctx: Context
  let memory: McpClientConnection

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-memory-'))
    ctx = await doguApp(dir, [{ permission: 'tool:memory_*', decision: 'allow' }])
    memory = connect(ctx, 'memory', { command: process.execPath, args: [serverEntry('@modelcontextprotocol/server-memory')], env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') } })
    await memory.connected(AbortSignal.timeout(20_000))
  })
  afterAll(async () => {
    await memory?.close()
    await ctx?.fiber.dispose()
    await rm(dir, { recursive: true, force: true })
  })

  it('lists, converts to every dialect, and calls: an entity created is in the graph, as structured data', async () => {
    expect(memory.tools).toEqual(['memory_add_observations', 'memory_create_entities', 'memory_create_relations', 'memory_delete_entities', 'memory_delete_observations', 'memory_delete_relations', 'memory_open_nodes', 'memory_read_graph', 'memory_search_nodes'])
    for (const name of memory.tools) {
      const json = toJsonSchema(ctx.tools.get(name)!.args)
      for (const dialect of DIALECTS) expect(() => convertToDialect(json, dialect), `${name} in ${dialect}`).not.toThrow()
    }
    const created = await call(ctx, 'memory_create_entities', { entities: [{ name: 'Dogu', entityType: 'project', observations: ['a tool runtime'] }] })
    expect(created.status).toBe('ok')
    const graph = await call(ctx, 'memory_read_graph', {})
    expect(graph.status).toBe('ok')
    expect(graph.data).toMatchObject({ entities: [{ name: 'Dogu', entityType: 'project', observations: ['a tool runtime'] }], relations: [] })
  })

  it('argument errors name the path', async () => {
    const result = await call(ctx, 'memory_create_entities', { entities: [{ name: 'x' }] })
    expect(result).toMatchObject({ status: 'error', code: 'invalid_arguments' })
    expect(result.content).toContain('$.entities[0].entityType')
  })
})
