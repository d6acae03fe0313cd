// Issue 25, items 7 and 12, on both HTTP mounts (`serveHttp` on node:http, `mountHttp` on
// @cordisjs/plugin-server): a refused request leaves nothing behind (no session, no
// connection), and a request from a page of another origin is refused on every method.
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
import { contextMcpServer, type DoguMcpServer, McpError, McpServerPlugin, mountHttp, serveHttp } from '../src'
import * as demoTools from './fixtures/demo-tools.mjs'

const TOKEN = 'admin-token-0123456789abcdef'
const APP = 'http://app.example'
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }
const ACCEPT = 'application/json, text/event-stream'
const N = 25

interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/**
 * One raw request (any Host, any Origin, as a page or a script would send it). An event
 * stream is not read past its headers; every request gives up after 10 s.
 */
function send(url: URL, method: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, signal: AbortSignal.timeout(10_000) }, (res) => {
      if (String(res.headers['content-type']).startsWith('text/event-stream') && method === 'GET') {
        resolve({ status: res.statusCode!, headers: res.headers, body: '' })
        res.destroy()
        return
      }
      const chunks: Buffer[] = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body))
  })
}

const json = (extra: Record<string, string> = {}) => ({ 'content-type': 'application/json', accept: ACCEPT, ...extra })

interface Mounted {
  url: URL
  /** The endpoint's open sessions. */
  sessions(): number
  close(): Promise<void>
}

type Mount = (server: DoguMcpServer, ctx: Context, options: { tokens?: { token: string }[]; origins?: string[] }) => Promise<Mounted>

const MOUNTS: [string, Mount][] = [
  ['serveHttp (node:http)', async (server, _ctx, options) => {
    const endpoint = await serveHttp(server, options)
    return { url: endpoint.url, sessions: () => endpoint.sessions, close: () => endpoint.close() }
  }],
  ['mountHttp (@cordisjs/plugin-server)', async (server, ctx, options) => {
    const fiber = ctx.plugin(Server, { host: '127.0.0.1', port: 0 })
    await fiber
    const http = ctx.get('server')!
    const mount = await mountHttp(server, http, options)
    return {
      url: mount.url,
      sessions: () => mount.sessions,
      close: async () => {
        await mount.close()
        http._http.closeAllConnections()
        await fiber.dispose()
      },
    }
  }],
]

describe.each(MOUNTS)('%s: refusals leave nothing, foreign origins are refused', (label, mount) => {
  // Alone on its port (serveHttp), the endpoint's own origin can host no page: it is served.
  // Mounted beside other routes, a page of that origin may be anyone's: foreign.
  const ownOriginServed = label.startsWith('serveHttp')
  let dir: string
  let ctx: Context
  let server: DoguMcpServer
  let endpoint: Mounted
  const clients: Client[] = []

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-refusals-'))
    ctx = new Context()
    guardLogs(ctx)
    await ctx.plugin(DoguPlugin, { audit: { storePath: join(dir, 'audit.jsonl') }, permissions: { storePath: join(dir, 'permissions.json') }, background: { storePath: join(dir, 'background.json') } })
    await ctx.plugin(demoTools as any)
    server = contextMcpServer(ctx as any, {})
    endpoint = await mount(server, ctx, { tokens: [{ token: TOKEN }], origins: [APP] })
  })
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close()
    await endpoint.close()
    await server.close()
    await ctx.fiber.dispose()
    await rm(dir, { recursive: true, force: true })
  })

  const connect = async () => {
    const client = new Client({ name: 'desk', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(endpoint.url))
    clients.push(client)
    return client
  }
  const host = () => endpoint.url.host

  it('item 7: initializes the SDK answers 406 or 415 (a page\'s no-cors POST) leave no connection and no session', async () => {
    const shapes: [Record<string, string>, number][] = [
      // What a no-cors fetch or a form may send: a simple content type, no JSON accept.
      [{ 'content-type': 'text/plain;charset=UTF-8', accept: '*/*' }, 406],
      [{ 'content-type': 'application/x-www-form-urlencoded' }, 406],
      [{ 'content-type': 'text/plain', accept: ACCEPT }, 415],
      [{ accept: 'application/json' }, 406],
    ]
    for (let i = 0; i < N; i++) {
      const [headers, status] = shapes[i % shapes.length]
      expect((await send(endpoint.url, 'POST', headers, INIT)).status).toBe(status)
    }
    expect(server.size).toBe(0)
    expect(endpoint.sessions()).toBe(0)
    // The count is real: a client that gets in is counted, and its close takes it away.
    const client = await connect()
    expect(server.size).toBe(1)
    expect(endpoint.sessions()).toBe(1)
    await (client.transport as StreamableHTTPClientTransport).terminateSession()
    await client.close()
    clients.splice(0)
    expect(endpoint.sessions()).toBe(0)
    expect(server.size).toBe(0)
  })

  it('item 7: refused for a bad token, a bad Host, a foreign Origin, a bad body: nothing is left either', async () => {
    const attacks: [Record<string, string>, unknown, number][] = [
      [json({ authorization: 'Bearer wrong-token-0123456789abcdef' }), INIT, 401],
      [json({ authorization: 'Basic YTpi' }), INIT, 401],
      [json({ host: `evil.example:${endpoint.url.port}` }), INIT, 403],
      [json({ origin: 'http://evil.example' }), INIT, 403],
      [json(), '{"jsonrpc": "2.0", "id": 1, "method": "initia', 400],
      [json(), [INIT], 400],
      [json(), { ...INIT, method: 'tools/list' }, 400],
    ]
    for (let i = 0; i < N; i++) {
      const [headers, body, status] = attacks[i % attacks.length]
      expect((await send(endpoint.url, 'POST', headers, body)).status).toBe(status)
    }
    expect(server.size).toBe(0)
    expect(endpoint.sessions()).toBe(0)
  })

  it('item 12: a foreign Origin is refused (403) on POST, GET, DELETE and OPTIONS, and the session it names lives on', async () => {
    const client = await connect()
    const session = (client.transport as StreamableHTTPClientTransport).sessionId!
    const named = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' }
    const call = { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'whoami', arguments: {} } }
    const own = [`http://${host()}`, `http://localhost:${endpoint.url.port}`]
    const foreign = ['http://evil.example', `http://127.0.0.1:1`, 'null', 'https://app.example', 'http://app.example:8080', ...ownOriginServed ? [] : own]
    for (const origin of foreign) {
      const posted = await send(endpoint.url, 'POST', json({ origin, ...named }), call)
      expect(posted.status, `POST from ${origin}`).toBe(403)
      expect(JSON.parse(posted.body)).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: `origin not allowed: ${origin}` }, id: null })
      expect(posted.headers['access-control-allow-origin']).toBeUndefined()
      expect((await send(endpoint.url, 'POST', json({ origin }), INIT)).status, `initialize from ${origin}`).toBe(403)
      expect((await send(endpoint.url, 'GET', { origin, accept: 'text/event-stream', ...named })).status, `GET from ${origin}`).toBe(403)
      expect((await send(endpoint.url, 'DELETE', { origin, ...named })).status, `DELETE from ${origin}`).toBe(403)
      expect((await send(endpoint.url, 'OPTIONS', { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' })).status, `preflight from ${origin}`).toBe(403)
    }
    // None of it reached the session: the DELETEs did not end it, and it still answers.
    expect(endpoint.sessions()).toBe(1)
    expect((await client.callTool({ name: 'lookup', arguments: { q: 'tea' } })).content).toEqual([{ type: 'text', text: 'found tea' }])
    expect(server.size).toBe(1)
    for (const origin of ownOriginServed ? own : []) {
      const init = await send(endpoint.url, 'POST', json({ origin }), INIT)
      expect(init.status, `initialize from its own origin ${origin}`).toBe(200)
      expect(init.headers['access-control-allow-origin']).toBe(origin)
    }
    expect(endpoint.sessions()).toBe(ownOriginServed ? 1 + own.length : 1)
  })

  it('item 12: no Origin (a non-browser client) is served; a configured origin is served with CORS, its preflight answered', async () => {
    // No Origin: the SDK client, and a raw initialize.
    const plain = await send(endpoint.url, 'POST', json(), INIT)
    expect(plain.status).toBe(200)
    expect(plain.headers['access-control-allow-origin']).toBeUndefined()

    const preflight = await send(endpoint.url, 'OPTIONS', { origin: APP, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, mcp-protocol-version' })
    expect(preflight.status).toBe(204)
    expect(preflight.headers).toMatchObject({
      'access-control-allow-origin': APP,
      'access-control-allow-methods': 'GET, POST, DELETE',
      'access-control-allow-headers': 'authorization, content-type, mcp-session-id, mcp-protocol-version, last-event-id',
    })
    const init = await send(endpoint.url, 'POST', json({ origin: APP }), INIT)
    expect(init.status).toBe(200)
    expect(init.headers).toMatchObject({ 'access-control-allow-origin': APP, 'access-control-expose-headers': 'mcp-session-id, mcp-protocol-version, www-authenticate' })
    const session = init.headers['mcp-session-id'] as string
    expect(session).toMatch(/^[0-9a-f-]{36}$/)
    const named = { origin: APP, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' }
    expect((await send(endpoint.url, 'POST', json(named), { jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202)
    const listed = await send(endpoint.url, 'POST', json(named), { jsonrpc: '2.0', id: 2, method: 'tools/list' })
    expect(listed.status).toBe(200)
    expect(listed.body).toContain('"lookup"')
    const stream = await send(endpoint.url, 'GET', { ...named, accept: 'text/event-stream' })
    expect(stream.status).toBe(200)
    expect(stream.headers['access-control-allow-origin']).toBe(APP)
    // A refusal from the allowed origin is readable by its page too (a wrong token: 401).
    const wrong = await send(endpoint.url, 'POST', json({ origin: APP, authorization: 'Bearer wrong-token-0123456789abcdef' }), INIT)
    expect(wrong.status).toBe(401)
    expect(wrong.headers['access-control-allow-origin']).toBe(APP)
    expect((await send(endpoint.url, 'DELETE', named)).status).toBe(200)
    expect(endpoint.sessions()).toBe(1)
    await connect()
    expect(endpoint.sessions()).toBe(2)
  })
})

describe('http.origins: configuration', () => {
  let dir: string
  let ctx: Context

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-origins-'))
    ctx = new Context()
    guardLogs(ctx)
    await ctx.plugin(DoguPlugin, { audit: { storePath: join(dir, 'audit.jsonl') }, permissions: { storePath: join(dir, 'permissions.json') }, background: { storePath: join(dir, 'background.json') } })
    await ctx.plugin(demoTools as any)
  })
  afterEach(async () => {
    await ctx.fiber.dispose()
    await rm(dir, { recursive: true, force: true })
  })

  it('an entry that is not an origin is refused when the endpoint starts', async () => {
    const server = contextMcpServer(ctx as any, {})
    try {
      for (const bad of ['app.example', 'http://app.example/mcp', 'http://app.example/?x=1', 'null', '*']) {
        await expect(serveHttp(server, { origins: [bad] })).rejects.toSatisfy((error) => McpError.is(error, 'INVALID_OPTIONS') && (error as Error).message.includes('http.origins[0] must be an origin'))
      }
      // A trailing slash or upper case is the same origin as the browser sends it.
      const endpoint = await serveHttp(server, { origins: ['HTTP://App.Example/'] })
      expect((await send(endpoint.url, 'POST', json({ origin: APP }), INIT)).status).toBe(200)
      await endpoint.close()
    } finally {
      await server.close()
    }
  })

  it('McpServerPlugin passes http.origins to both mounts', async () => {
    const listening = () => new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => { off(); reject(new Error('dogu-mcp/listening was not announced within 10 s')) }, 10_000)
      const off = ctx.on('dogu-mcp/listening', (href) => {
        clearTimeout(timer)
        off()
        resolve(href)
      })
    })
    let announced = listening()
    const node = ctx.plugin(McpServerPlugin as any, { http: { origins: [APP] } })
    await node
    const nodeUrl = new URL(await announced)
    const serverFiber = ctx.plugin(Server, { host: '127.0.0.1', port: 0 })
    await serverFiber
    announced = listening()
    const mounted = ctx.plugin(McpServerPlugin as any, { http: { via: 'server', origins: [APP] } })
    await mounted
    const mountedUrl = new URL(await announced)
    try {
      for (const url of [nodeUrl, mountedUrl]) {
        expect((await send(url, 'POST', json({ origin: 'http://evil.example' }), INIT)).status).toBe(403)
        expect((await send(url, 'POST', json({ origin: APP }), INIT)).status).toBe(200)
      }
    } finally {
      await node.dispose()
      await mounted.dispose()
      ctx.get('server')!._http.closeAllConnections()
      await serverFiber.dispose()
    }
  })
})
