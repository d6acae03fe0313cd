// Issue 31: a call over a quota. Dogu's MCP server sends it as an `isError` result with the
// text the model acts on and `retryAfterMs` in `_meta`; a Dogu client that trusts the server
// ends the call `rate_limited` too, and one that does not reads the same text as an error.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PermissionService, ToolService } from '@dogu/cordis'
import { defineTool, type ToolResult, ToolRegistry } from '@dogu/core'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { Context } from 'cordis'
import Schema from 'schemastery'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { createMcpServer, type DoguMcpServer, McpClientPlugin, type McpHttpEndpoint, serveHttp, toCallToolResult } from '../src'

const REFUSAL = /^Rate limited: quota 'search per user' used: 1 per 1 h; try again in \d+ (h|min|s)\.$/

/** A Dogu registry whose `search` may run once per user and hour, served over MCP. */
function servedRegistry() {
  const registry = new ToolRegistry({ quotas: [{ name: 'search per user', tools: 'search', per: 'user', max: 1, window: '1h' }] })
  const ran: string[] = []
  registry.define(defineTool({
    name: 'search',
    description: 'Search the notes.',
    args: Schema.object({ q: Schema.string().required() }),
    traits: { effect: 'read' },
    run: ({ q }) => {
      ran.push(q)
      return `3 notes about ${q}`
    },
  }))
  const server = createMcpServer({ toolset: (options) => registry.toolset(options) })
  return { registry, server, ran }
}

describe('Dogu\'s MCP server: a call over its quota', () => {
  it('is an isError result with the refusal text, its status and retryAfterMs in _meta', async () => {
    const { server, ran } = servedRegistry()
    const [a, b] = InMemoryTransport.createLinkedPair()
    await server.connect(b, { user: 'alice' })
    const client = new Client({ name: 'test', version: '1' })
    await client.connect(a)
    try {
      const first = await client.callTool({ name: 'search', arguments: { q: 'tea' } })
      expect(first.isError).toBeUndefined()
      expect(first.content).toEqual([{ type: 'text', text: '3 notes about tea' }])
      const second = await client.callTool({ name: 'search', arguments: { q: 'coffee' } })
      expect(ran).toEqual(['tea'])
      expect(second.isError).toBe(true)
      const [block] = second.content as { type: string; text: string }[]
      expect(block.type).toBe('text')
      expect(block.text).toMatch(REFUSAL)
      const meta = (second._meta as Record<string, { status: string; code: string; retryAfterMs: number }>)['dogu.dev/result']
      expect(meta).toMatchObject({ status: 'rate_limited', code: 'rate_limited' })
      expect(meta.retryAfterMs).toBeGreaterThan(0)
      expect(meta.retryAfterMs).toBeLessThanOrEqual(3_600_000)
    } finally {
      await client.close()
      await server.close()
    }
  })

  it('toCallToolResult keeps retryAfterMs beside the status', () => {
    const result: ToolResult = { id: 'c1', name: 'search', status: 'rate_limited', code: 'rate_limited', retryAfterMs: 840_000, content: "Rate limited: quota 'search per user' used: 20 per 1 h; try again in 14 min.", durationMs: 0 }
    expect(toCallToolResult(result)).toEqual({
      content: [{ type: 'text', text: "Rate limited: quota 'search per user' used: 20 per 1 h; try again in 14 min." }],
      isError: true,
      _meta: { 'dogu.dev/result': { status: 'rate_limited', code: 'rate_limited', retryAfterMs: 840_000 } },
    })
  })
})

describe('Dogu → MCP → Dogu: the inner server\'s quota refuses a call', () => {
  let served: ReturnType<typeof servedRegistry>
  let endpoint: McpHttpEndpoint
  let server: DoguMcpServer
  let outer: Context
  let dir: string

  beforeAll(async () => {
    served = servedRegistry()
    server = served.server
    endpoint = await serveHttp(server, {})
    outer = new Context()
    guardLogs(outer)
    dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-quota-'))
    await outer.plugin(ToolService)
    // An untrusted server's tools are all `exec`: this rule lets its search run without asking.
    await outer.plugin(PermissionService, { storePath: join(dir, 'permissions.json'), rules: [{ permission: 'tool:plain_search', decision: 'allow', name: 'plain search' }] })
    await outer.plugin(McpClientPlugin as any, {
      servers: { trusted: { url: endpoint.url.href, trusted: true }, plain: { url: endpoint.url.href } },
      reconnect: { initialDelay: 10, maxDelay: 100 },
    })
    const deadline = Date.now() + 20_000
    while (!(outer.tools.get('trusted_search') && outer.tools.get('plain_search'))) {
      if (Date.now() > deadline) throw new Error('the client plugin did not import the tools in 20 s')
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })
  afterAll(async () => {
    await outer?.fiber.dispose()
    await server?.close()
    await endpoint?.close()
    await rm(dir, { recursive: true, force: true })
  })

  const call = async (name: string, q: string, user: string) => {
    const [result] = await outer.tools.execute([{ id: 'c1', name, arguments: { q } }], { session: { id: `s-${user}`, platform: 'test', userId: user } })
    return result!
  }

  it('from a trusted server: rate_limited here too, with the server\'s text and retryAfterMs', async () => {
    // Every connection without a token is the inner server's one anonymous user: one quota for both servers.
    expect((await call('trusted_search', 'tea', 'u1')).status).toBe('ok')
    const refused = await call('trusted_search', 'coffee', 'u2')
    expect(served.ran).toEqual(['tea'])
    expect(refused).toMatchObject({ name: 'trusted_search', status: 'rate_limited', code: 'rate_limited' })
    expect(refused.content).toMatch(REFUSAL)
    expect(refused.retryAfterMs).toBeGreaterThan(0)
    expect(refused.retryAfterMs).toBeLessThanOrEqual(3_600_000)
  })

  it('from a server not trusted: an error whose text still says when to try again', async () => {
    const refused = await call('plain_search', 'milk', 'u3')
    expect(served.ran).toEqual(['tea'])
    expect(refused).toMatchObject({ name: 'plain_search', status: 'error', code: 'tool_error' })
    expect(refused.content).toMatch(/^Error: Rate limited: quota 'search per user' used: 1 per 1 h; try again in \d+ (h|min|s)\.$/)
    expect(refused.retryAfterMs).toBeUndefined()
  })
})
