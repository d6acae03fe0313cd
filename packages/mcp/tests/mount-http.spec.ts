import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Server from '@cordisjs/plugin-server'
import { DoguPlugin } from '@dogu/cordis'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { Context } from 'cordis'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { McpError, McpServerPlugin } from '../src'
import * as demoTools from './fixtures/demo-tools.mjs'

const ADMIN = 'admin-token-0123456789abcdef'
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }

const post = (url: URL | string, body: unknown, headers: Record<string, string> = {}) => fetch(url, {
  method: 'POST',
  headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
  body: JSON.stringify(body),
})

/** Resolves with the next URL announced as `dogu-mcp/listening`; rejects after 10 s. */
function announcement(ctx: Context): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { off(); reject(new Error('dogu-mcp/listening was not announced within 10 s')) }, 10_000)
    const off = ctx.on('dogu-mcp/listening', (href) => {
      clearTimeout(timer)
      off()
      resolve(href)
    })
  })
}

describe('McpServerPlugin with http.via "server": a route of @cordisjs/plugin-server', () => {
  let dir: string
  let ctx: Context
  let server: Server
  let serverFiber: ReturnType<Context['plugin']>
  const clients: Client[] = []

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-mount-'))
    ctx = new Context()
    guardLogs(ctx)
    await ctx.plugin(DoguPlugin, { audit: { storePath: join(dir, 'audit.jsonl') }, permissions: { storePath: join(dir, 'permissions.json') }, background: { storePath: join(dir, 'background.json') } })
    await ctx.plugin(demoTools as any)
    serverFiber = ctx.plugin(Server, { host: '127.0.0.1', port: 0 })
    await serverFiber
    server = ctx.get('server')!
  })
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close()
    server._http.closeAllConnections()
    await ctx.fiber.dispose()
    await rm(dir, { recursive: true, force: true })
  })

  /** Loads the plugin and resolves with the URL it announces (the route is mounted by then). */
  async function load(http: McpServerPlugin.Config['http']) {
    const url = announcement(ctx)
    const fiber = ctx.plugin(McpServerPlugin as any, { http })
    await fiber
    return { fiber, href: await url }
  }

  it('serves the SDK client on the app server\'s port; gone (404) once disposed', async () => {
    const { fiber, href } = await load({ via: 'server' })
    const port = (server._http.address() as { port: number }).port
    expect(href).toBe(`http://127.0.0.1:${port}/mcp`)
    const client = new Client({ name: 'desk', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(new URL(href)))
    clients.push(client)
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('lookup')
    expect((await client.callTool({ name: 'lookup', arguments: { q: 'tea' } })).content).toEqual([{ type: 'text', text: 'found tea' }])
    expect((await client.callTool({ name: 'whoami', arguments: {} })).structuredContent).toMatchObject({ userId: 'anonymous', authority: 1, platform: 'mcp' })

    await fiber.dispose()
    const gone = await post(href, INIT)
    expect(gone.status).toBe(404)
    // The server itself is still up: only the route went away.
    expect(server._http.listening).toBe(true)
    expect(await gone.text()).toBe('')
  })

  it('follows ctx.server: unmounted when it goes, mounted on the next one', async () => {
    const { href } = await load({ via: 'server' })
    const again = announcement(ctx)
    await serverFiber.dispose()
    await expect(fetch(href, { method: 'POST', body: '{}' })).rejects.toThrow('fetch failed')
    serverFiber = ctx.plugin(Server, { host: '127.0.0.1', port: 0 })
    await serverFiber
    server = ctx.get('server')!
    const moved = await again
    const port = (server._http.address() as { port: number }).port
    expect(moved).toBe(`http://127.0.0.1:${port}/mcp`)
    const init = await post(moved, INIT)
    expect(init.status).toBe(200)
    expect(init.headers.get('mcp-session-id')).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('with tokens: a request without one (or with a wrong one) is refused; the token\'s authority applies', async () => {
    const { href } = await load({ via: 'server', path: '/tools/mcp', tokens: [{ token: ADMIN, authority: 4, user: 'owner' }] })
    expect(new URL(href).pathname).toBe('/tools/mcp')
    // On loopback a request may come without a token, but a wrong one is refused.
    const wrong = await post(href, INIT, { authorization: 'Bearer wrong-token-0123456789abcdef' })
    expect(wrong.status).toBe(401)
    expect(wrong.headers.get('www-authenticate')).toBe('Bearer')
    expect(await wrong.json()).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: 'invalid bearer token' }, id: null })

    const client = new Client({ name: 'desk', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(new URL(href), { requestInit: { headers: { authorization: `Bearer ${ADMIN}` } } }))
    clients.push(client)
    expect((await client.callTool({ name: 'whoami', arguments: {} })).structuredContent).toMatchObject({ userId: 'owner', authority: 4 })
    // Naming that session without the token that opened it gets nothing.
    const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!
    const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: {} } }
    const hijack = await post(href, call, { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' })
    expect(hijack.status).toBe(404)
    expect(await hijack.json()).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: 'unknown session' }, id: null })
  })

  it('on a loopback server, a request under another Host name is refused (DNS rebinding)', async () => {
    const { href } = await load({ via: 'server' })
    const url = new URL(href)
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(url, { method: 'POST', headers: { host: `evil.example:${url.port}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' } }, (res) => {
        res.resume()
        resolve(res.statusCode!)
      })
      req.on('error', reject)
      req.end(JSON.stringify(INIT))
    })
    expect(status).toBe(403)
  })
})

describe('McpServerPlugin with http.via "server" on a non-loopback server', () => {
  it('needs tokens: every request without one is 401', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-mount-'))
    const ctx = new Context()
    guardLogs(ctx)
    try {
      await ctx.plugin(DoguPlugin, { audit: { storePath: join(dir, 'audit.jsonl') }, permissions: { storePath: join(dir, 'permissions.json') }, background: { storePath: join(dir, 'background.json') } })
      await ctx.plugin(demoTools as any)
      await ctx.plugin(Server, { host: '0.0.0.0', port: 0 })
      const server = ctx.get('server')!
      const url = announcement(ctx)
      await ctx.plugin(McpServerPlugin as any, { http: { via: 'server', tokens: [{ token: ADMIN }] } })
      const href = await url
      const none = await post(href, INIT)
      expect(none.status).toBe(401)
      expect(await none.json()).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: 'a bearer token is required' }, id: null })
      expect((await post(href, INIT, { authorization: `Bearer ${ADMIN}` })).status).toBe(200)
      server._http.closeAllConnections()
    } finally {
      await ctx.fiber.dispose()
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('without tokens it is not mounted, and says why as the plugin\'s error', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-mount-'))
    const ctx = new Context()
    // Reported twice: when the plugin fails, and again when the app is disposed.
    guardLogs(ctx).expect('[dogu-mcp-server] McpError: MCP over HTTP on 0.0.0.0 needs at least one bearer token (http.tokens); only loopback may go without')
    try {
      await ctx.plugin(DoguPlugin, { audit: { storePath: join(dir, 'audit.jsonl') }, permissions: { storePath: join(dir, 'permissions.json') }, background: { storePath: join(dir, 'background.json') } })
      await ctx.plugin(demoTools as any)
      await ctx.plugin(Server, { host: '0.0.0.0', port: 0 })
      const server = ctx.get('server')!
      const reported = new Promise<unknown>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no error reported within 10 s')), 10_000)
        ctx.on('internal/error', (error: unknown) => {
          clearTimeout(timer)
          resolve(error)
        })
      })
      await ctx.plugin(McpServerPlugin as any, { http: { via: 'server' } })
      expect(McpError.is(await reported, 'UNSAFE_LISTEN')).toBe(true)
      if (!server._http.listening) await once(server._http, 'listening', { signal: AbortSignal.timeout(10_000) })
      const port = (server._http.address() as { port: number }).port
      expect((await post(`http://127.0.0.1:${port}/mcp`, INIT)).status).toBe(404)
      server._http.closeAllConnections()
    } finally {
      await ctx.fiber.dispose()
      await rm(dir, { recursive: true, force: true })
    }
  })
})
