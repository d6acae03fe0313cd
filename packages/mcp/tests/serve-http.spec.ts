import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { DoguPlugin } from '@dogu/cordis'
import { Context } from 'cordis'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { contextMcpServer, type DoguMcpServer, McpError, McpServerPlugin, serveHttp } from '../src'
import * as demoTools from './fixtures/demo-tools.mjs'

const ADMIN = 'admin-token-0123456789abcdef'
const GUEST = 'guest-token-0123456789abcdef'
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }

describe('serveHttp: loopback by default, a bearer token for anything else', () => {
  let dir: string
  let ctx: Context
  let server: DoguMcpServer
  const closers: (() => Promise<unknown>)[] = []

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-http-'))
    ctx = new Context()
    guardLogs(ctx)
    await ctx.plugin(DoguPlugin, { audit: { storePath: join(dir, 'audit.jsonl') }, permissions: { storePath: join(dir, 'permissions.json') }, background: { storePath: join(dir, 'background.json') } })
    await ctx.plugin(demoTools as any)
    server = contextMcpServer(ctx as any, { authority: 1 })
  })
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close()
    await server.close()
    await ctx.fiber.dispose()
    await rm(dir, { recursive: true, force: true })
  })

  const post = (url: URL, body: unknown, headers: Record<string, string> = {}) => fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  })

  it('refuses to listen beyond loopback without tokens', async () => {
    await expect(serveHttp(server, { host: '0.0.0.0' })).rejects.toSatisfy((error) => McpError.is(error, 'UNSAFE_LISTEN'))
    await expect(serveHttp(server, { tokens: [{ token: 'short' }] })).rejects.toThrow('http.tokens[0].token must be a string of at least 16 characters')
  })

  it('beyond loopback: no token or a wrong one is 401; a session is bound to the token that opened it', async () => {
    const endpoint = await serveHttp(server, { host: '0.0.0.0', tokens: [{ token: ADMIN, authority: 4, user: 'owner' }, { token: GUEST, authority: 1 }] })
    closers.push(() => endpoint.close())
    const none = await post(endpoint.url, INIT)
    expect(none.status).toBe(401)
    expect(none.headers.get('www-authenticate')).toBe('Bearer')
    expect((await post(endpoint.url, INIT, { authorization: 'Bearer wrong-token-0123456789abcdef' })).status).toBe(401)

    const client = new Client({ name: 'desk', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(endpoint.url, { requestInit: { headers: { authorization: `Bearer ${ADMIN}` } } }))
    closers.push(() => client.close())
    const whoami = await client.callTool({ name: 'whoami', arguments: {} })
    expect(whoami.structuredContent).toMatchObject({ userId: 'owner', authority: 4, platform: 'mcp' })

    // Another token (or none) naming that session gets nothing from it.
    const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!
    const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: {} } }
    const hijack = await post(endpoint.url, call, { authorization: `Bearer ${GUEST}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' })
    expect(hijack.status).toBe(404)
    expect(await hijack.json()).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: 'unknown session' }, id: null })
    expect((await post(endpoint.url, call, { 'mcp-session-id': sessionId })).status).toBe(401)
  })

  it('on loopback: no token gives the default authority; a request under another Host name is refused', async () => {
    const endpoint = await serveHttp(server, {})
    closers.push(() => endpoint.close())
    const client = new Client({ name: 'local', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(endpoint.url))
    closers.push(() => client.close())
    expect((await client.callTool({ name: 'whoami', arguments: {} })).structuredContent).toMatchObject({ userId: 'anonymous', authority: 1 })
    // DNS rebinding: a page on evil.example resolving to 127.0.0.1.
    const { request } = await import('node:http')
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(endpoint.url, { method: 'POST', headers: { host: `evil.example:${endpoint.url.port}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' } }, (res) => {
        res.resume()
        resolve(res.statusCode!)
      })
      req.on('error', reject)
      req.end(JSON.stringify(INIT))
    })
    expect(status).toBe(403)
  })

  it('McpServerPlugin announces where it listens, and stops listening when disposed', async () => {
    let announced!: (url: string) => void
    const url = new Promise<string>((resolve) => { announced = resolve })
    ctx.on('dogu-mcp/listening', (href) => announced(href))
    const fiber = ctx.plugin(McpServerPlugin as any, { http: {} })
    await fiber
    const href = await url
    expect(href).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    const client = new Client({ name: 'plugin', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(new URL(href)))
    expect((await client.callTool({ name: 'lookup', arguments: { q: 'tea' } })).content).toEqual([{ type: 'text', text: 'found tea' }])
    await client.close()
    await fiber.dispose()
    await expect(fetch(href, { method: 'POST', body: '{}' })).rejects.toThrow('fetch failed')
  })
})
