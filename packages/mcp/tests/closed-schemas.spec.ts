// Issue 25, item 10: a server whose tools state `additionalProperties: false` (the Go SDK does
// by default, zod strict objects do) imports them as closed objects, and one tool Dogu really
// refuses (its schema, its name) is logged and skipped: the connection stands and the other
// tools of that server are there.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defineTool, type ToolResult } from '@dogu/core'
import { convertToDialect, type Dialect, fromJsonSchema, toJsonSchema } from '@dogu/schema'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js'
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { McpClientConnection } from '../src'
import { doguApp } from './client-harness'

const DIALECTS: Dialect[] = ['json', 'openai', 'anthropic', 'gemini']
const session = { id: 'cli', userId: 'alice' }

/** What the Go SDK infers from `struct { Path string; Tags []string; Options struct { Depth int } }`: every object closed. */
const GO_READ: Tool['inputSchema'] = {
  type: 'object',
  required: ['path'],
  properties: {
    path: { type: 'string', description: 'the file' },
    tags: { type: ['null', 'array'], items: { type: 'string' } },
    options: { type: 'object', properties: { depth: { type: 'integer' } }, additionalProperties: false },
  },
  additionalProperties: false,
} as Tool['inputSchema']
/** The Go SDK's input of a tool without arguments (`struct{}`). */
const GO_EMPTY: Tool['inputSchema'] = { type: 'object', additionalProperties: false } as Tool['inputSchema']
/** What the TypeScript SDK's McpServer lists for `z.object({ q, n?, nested?: z.object({ a }).strict() }).strict()` (zod 4.6). */
const ZOD_STRICT: Tool['inputSchema'] = {
  type: 'object',
  properties: {
    q: { type: 'string' },
    n: { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 },
    nested: { type: 'object', properties: { a: { type: 'boolean' } }, required: ['a'], additionalProperties: false },
  },
  required: ['q'],
  $schema: 'http://json-schema.org/draft-07/schema#',
  additionalProperties: false,
}
/** A schema outside what Dogu converts. */
const IF_THEN: Tool['inputSchema'] = { type: 'object', properties: { x: { type: 'string' } }, if: { required: ['x'] }, then: { required: ['x'] } } as Tool['inputSchema']

/** An MCP server in memory whose tool list the test sets; it records the arguments it is called with. */
function closedServer(initial: Tool[]) {
  let tools = initial
  const calls: { name: string; arguments: unknown }[] = []
  const servers: Server[] = []
  return {
    calls,
    /** Replaces the listing and tells every connected client. */
    async list(next: Tool[]) {
      tools = next
      await Promise.all(servers.map((server) => server.sendToolListChanged()))
    },
    transport() {
      const [client, serverSide] = InMemoryTransport.createLinkedPair()
      const server = new Server({ name: 'closed', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } })
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }))
      server.setRequestHandler(CallToolRequestSchema, (request) => {
        calls.push({ name: request.params.name, arguments: request.params.arguments })
        return { content: [{ type: 'text', text: `called ${request.params.name}` }] }
      })
      servers.push(server)
      void server.connect(serverSide)
      return client
    },
  }
}

describe('importing closed objects (additionalProperties: false), and skipping what Dogu refuses', () => {
  let dir: string
  let ctx: Context

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-closed-'))
    ctx = await doguApp(dir, [{ permission: 'tool:go_*', decision: 'allow' }])
  })
  afterEach(async () => {
    await ctx.fiber.dispose()
    await rm(dir, { recursive: true, force: true })
  })

  const connect = (server: ReturnType<typeof closedServer>) => {
    const logger = { debug() {}, warn: (format: string, ...args: unknown[]) => ctx.emit(ctx, 'internal/warn', format, ...args) }
    const connection = new McpClientConnection({ name: 'go', server: { command: 'unused' }, transport: () => server.transport(), define: (tool) => ctx.tools.define(tool), logger, reconnect: { initialDelay: 10, maxDelay: 100 } })
    connection.start()
    return connection
  }
  const call = async (name: string, args: Record<string, unknown>): Promise<ToolResult> => (await ctx.tools.execute([{ id: 'c', name, arguments: args }], { session }))[0]

  it('a Go SDK server and zod strict tools connect, and their objects stay closed', async () => {
    const server = closedServer([
      { name: 'read', description: 'Read a file', inputSchema: GO_READ },
      { name: 'ping', description: 'Ping', inputSchema: GO_EMPTY },
      { name: 'search', description: 'Search', inputSchema: ZOD_STRICT },
    ])
    const connection = connect(server)
    try {
      await connection.connected(AbortSignal.timeout(10_000))
      expect(connection.status).toBe('connected')
      expect(connection.tools).toEqual(['go_ping', 'go_read', 'go_search'])
      expect(connection.skipped).toEqual([])

      // A model is told the objects are closed, in every dialect.
      const toolset = ctx.tools.toolset({ session, include: ['go_*'] })
      const read = toolset.definitions('json').find((definition) => definition.name === 'go_read')!
      expect(read.parameters).toMatchObject({ additionalProperties: false, properties: { options: { additionalProperties: false } } })
      for (const dialect of DIALECTS) expect(toolset.definitions(dialect)).toHaveLength(3)
      for (const name of connection.tools) {
        for (const dialect of DIALECTS) expect(() => convertToDialect(toJsonSchema(ctx.tools.get(name)!.args), dialect), `${name} in ${dialect}`).not.toThrow()
      }

      // Valid arguments reach the server.
      expect(await call('go_read', { path: '/a', tags: ['x'], options: { depth: 2 } })).toMatchObject({ status: 'ok', content: 'called read' })
      expect(await call('go_ping', {})).toMatchObject({ status: 'ok' })
      expect(await call('go_search', { q: 'tea', nested: { a: true } })).toMatchObject({ status: 'ok' })
      expect(server.calls).toEqual([
        { name: 'read', arguments: { path: '/a', tags: ['x'], options: { depth: 2 } } },
        { name: 'ping', arguments: {} },
        { name: 'search', arguments: { q: 'tea', nested: { a: true } } },
      ])

      // An extra key, at the top or nested, is refused by Dogu, naming it; the server never sees it.
      const extra = await call('go_read', { path: '/a', mode: 'w' })
      expect(extra).toMatchObject({ status: 'error', code: 'invalid_arguments' })
      expect(extra.content).toContain('$.mode')
      const nested = await call('go_read', { path: '/a', options: { depth: 1, follow: true } })
      expect(nested).toMatchObject({ status: 'error', code: 'invalid_arguments' })
      expect(nested.content).toContain('$.options.follow')
      expect(await call('go_ping', { anything: 1 })).toMatchObject({ status: 'error', code: 'invalid_arguments' })
      expect(await call('go_search', { q: 'tea', nested: { a: true, b: 1 } })).toMatchObject({ status: 'error', code: 'invalid_arguments' })
      expect(server.calls).toHaveLength(3)
    } finally {
      await connection.close()
    }
  })

  it('a tool Dogu refuses (its schema, or a name another plugin holds) is logged and skipped; the others import', async () => {
    const guard = guardLogs(ctx)
    guard.expect('[app] MCP server "go": skipped tool branchy: "if" has no schemastery form (at $.if)')
    guard.expect('[app] MCP server "go": skipped tool taken: tool "go_taken" is already defined by plugin "other"; plugin "root" cannot define it too')
    // Another plugin's tool holds the name the server's `taken` would import as.
    await ctx.plugin({ name: 'other', inject: ['tools'], apply: (other: Context) => { other.tools.define({ name: 'go_taken', description: 'Not the server\'s', traits: { effect: 'read' }, run: () => 'mine' }) } })
    const server = closedServer([
      { name: 'branchy', description: 'if/then', inputSchema: IF_THEN },
      { name: 'taken', description: 'Collides', inputSchema: GO_EMPTY },
      { name: 'read', description: 'Read a file', inputSchema: GO_READ },
    ])
    const connection = connect(server)
    try {
      await connection.connected(AbortSignal.timeout(10_000))
      expect(connection.status).toBe('connected')
      expect(connection.tools).toEqual(['go_read'])
      expect(connection.skipped).toEqual([
        { tool: 'branchy', reason: '"if" has no schemastery form (at $.if)' },
        { tool: 'taken', reason: expect.stringContaining('tool "go_taken" is already defined by') },
      ])
      expect(await call('go_read', { path: '/a' })).toMatchObject({ status: 'ok', content: 'called read' })
      // The other plugin's tool is untouched.
      expect(await call('go_taken', {})).toMatchObject({ status: 'ok', content: 'mine' })
    } finally {
      await connection.close()
    }
  })

  it('a pattern with a backreference or a lookahead imports unenforced, logged and listed; a catastrophic one runs in linear time', async () => {
    const guard = guardLogs(ctx)
    guard.expect('[app] MCP server "go": tool tagged is imported without enforcing')
    const server = closedServer([
      {
        name: 'tagged',
        description: 'Tags',
        inputSchema: { type: 'object', properties: { pair: { type: 'string', pattern: '^(a)\\1$' }, word: { type: 'string', pattern: '^(?=x)x+$' } } },
      },
      { name: 'evil', description: 'Stalls a backtracking engine', inputSchema: { type: 'object', properties: { name: { type: 'string', pattern: '^(a+)+$' } }, required: ['name'] } },
    ])
    const connection = connect(server)
    try {
      await connection.connected(AbortSignal.timeout(10_000))
      expect(connection.tools).toEqual(['go_evil', 'go_tagged'])
      expect(Object.keys(connection.loosened)).toEqual(['go_tagged'])
      expect(connection.loosened.go_tagged.map((loosening) => loosening.path)).toEqual(['$.properties.pair.pattern', '$.properties.word.pattern'])
      // Not enforced: the server gets the value and judges it itself.
      expect(await call('go_tagged', { pair: 'ab', word: 'y' })).toMatchObject({ status: 'ok' })
      // 30 a's and a b would take a backtracking engine minutes; refused at once.
      expect(await call('go_evil', { name: `${'a'.repeat(30)}b` })).toMatchObject({ status: 'error', code: 'invalid_arguments' })
      expect(await call('go_evil', { name: 'a'.repeat(10_000) })).toMatchObject({ status: 'ok' })
    } finally {
      await connection.close()
    }
  })

  it('list_changed bringing a refused tool, or turning an imported one into one, keeps the connection and the other tools', async () => {
    const guard = guardLogs(ctx)
    // Logged at each listing that has them.
    guard.expect('[app] MCP server "go": skipped tool branchy: "if" has no schemastery form (at $.if)')
    guard.expect('[app] MCP server "go": skipped tool read: "if" has no schemastery form (at $.if)')
    const server = closedServer([
      { name: 'read', description: 'Read a file', inputSchema: GO_READ },
      { name: 'ping', description: 'Ping', inputSchema: GO_EMPTY },
    ])
    const connection = connect(server)
    try {
      await connection.connected(AbortSignal.timeout(10_000))
      const ping = ctx.tools.get('go_ping')
      await server.list([
        { name: 'read', description: 'Read a file', inputSchema: GO_READ },
        { name: 'ping', description: 'Ping', inputSchema: GO_EMPTY },
        { name: 'branchy', description: 'if/then', inputSchema: IF_THEN },
      ])
      await until(() => connection.skipped.length === 1)
      expect(connection.tools).toEqual(['go_ping', 'go_read'])
      // The stale definition of a tool whose new schema is refused goes; nothing else moves.
      await server.list([
        { name: 'read', description: 'Read a file', inputSchema: IF_THEN },
        { name: 'ping', description: 'Ping', inputSchema: GO_EMPTY },
      ])
      await until(() => !ctx.tools.get('go_read'))
      expect(connection.tools).toEqual(['go_ping'])
      expect(connection.skipped).toEqual([{ tool: 'read', reason: '"if" has no schemastery form (at $.if)' }])
      expect(ctx.tools.get('go_ping')).toBe(ping)
      expect(connection.status).toBe('connected')
      expect(await call('go_ping', {})).toMatchObject({ status: 'ok' })
    } finally {
      await connection.close()
    }
  })
})

describe('defineTool and closed objects', () => {
  const run = () => 'ok'

  it('takes a closed object as fromJsonSchema makes it, and its round trip is additionalProperties: false', () => {
    const args = fromJsonSchema({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false })
    const tool = defineTool({ name: 'closed', description: '', args, run })
    expect(toJsonSchema(tool.args)).toMatchObject({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false })
    expect(() => tool.args({ a: 'x', b: 1 })).toThrow('$.b')
    expect(tool.args({ a: 'x' })).toEqual({ a: 'x' })
  })

  it('still refuses args that are not an object for every value: a dict alone, or dicts without an object', () => {
    expect(() => defineTool({ name: 'd', description: '', args: Schema.dict(Schema.string()) as any, run })).toThrow('args must be a schemastery object schema')
    expect(() => defineTool({ name: 'd', description: '', args: Schema.intersect([Schema.dict(Schema.string()), Schema.dict(Schema.number())]) as any, run })).toThrow('args must be a schemastery object schema')
    expect(() => defineTool({ name: 'd', description: '', args: Schema.intersect([Schema.object({}), Schema.string()]) as any, run })).toThrow('args must be a schemastery object schema')
  })
})

/** Resolves once `check` holds, polling; rejects after 10 s. */
async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!check()) {
    if (Date.now() > deadline) throw new Error('the condition did not hold within 10 s')
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}
