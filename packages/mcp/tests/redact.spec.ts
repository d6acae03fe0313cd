import { createServer, type Server as HttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { DoguPlugin, ToolService } from '@dogu/cordis'
import { defineTool } from '@dogu/core'
import { Context, type Fiber } from 'cordis'
import Schema from 'schemastery'
import { afterEach, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { koishiApp, loadPlugin, settle } from '../../koishi/tests/koishi-app'
import { McpClientPlugin, McpServerPlugin } from '../src'

const BEARER = 'mcp-bearer-5e6f7a8b9c0d1e2f'
const API_KEY = 'x-api-key-0a1b2c3d4e5f'
const ADMIN = 'admin-token-0123456789abcdef'
const session = { id: 's1', userId: 'u1' }

const closers: (() => unknown)[] = []
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close()
})

/**
 * An MCP server over Streamable HTTP (stateless) whose one tool, `echo_headers`, answers with
 * the headers of the request that called it: what a debug tool or an error page of a real
 * server might show.
 */
async function headerEchoServer(): Promise<URL> {
  const http: HttpServer = createServer(async (req, res) => {
    const server = new McpServer({ name: 'echo-headers', version: '1.0.0' })
    server.registerTool('echo_headers', { description: 'The request\'s headers', annotations: { readOnlyHint: true } }, (extra) => {
      const headers = extra.requestInfo?.headers ?? {}
      const text = `authorization: ${headers.authorization}; x-api-key: ${headers['x-api-key']}; token alone: ${String(headers.authorization).slice('Bearer '.length)}`
      return { content: [{ type: 'text', text }], structuredContent: { authorization: String(headers.authorization), key: String(headers['x-api-key']) } }
    })
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined })
    res.on('close', () => {
      void transport.close()
      void server.close()
    })
    await server.connect(transport)
    await transport.handleRequest(req, res)
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  closers.push(() => new Promise((resolve) => {
    http.close(resolve)
    // A client's open event stream would hold the close until the app that owns it stops.
    http.closeAllConnections()
  }))
  return new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`)
}

describe('redact: the MCP client plugin\'s headers', () => {
  it('a tool that echoes the request\'s headers shows the model [redacted], the whole value and the bare token alike', async () => {
    const url = await headerEchoServer()
    const ctx = new Context()
    guardLogs(ctx)
    closers.push(() => ctx.fiber.dispose())
    await ctx.plugin(ToolService)
    const fiber: Fiber = await ctx.plugin(McpClientPlugin as any, {
      servers: { hdr: { url: url.href, trusted: true, headers: { Authorization: `Bearer ${BEARER}`, 'X-Api-Key': API_KEY } } },
      reconnect: { initialDelay: 10, maxDelay: 100 },
    })
    await expect.poll(() => ctx.tools.get('hdr_echo_headers')).toBeDefined()
    const [result] = await ctx.tools.execute([{ id: 'c1', name: 'hdr_echo_headers', arguments: {} }], { session })
    expect(result.status).toBe('ok')
    expect(result.content).toContain('authorization: [redacted]; x-api-key: [redacted]; token alone: [redacted]')
    expect(JSON.stringify(result)).not.toMatch(/mcp-bearer|x-api-key-0/)

    // Disposed with the plugin: the same text, shown by a tool of another plugin, is kept.
    await fiber.dispose()
    ctx.plugin({ name: 'printer', inject: ['tools'], apply: (ctx: Context) => { ctx.tools.define(printer(`Bearer ${BEARER}`)) } })
    await expect.poll(() => ctx.tools.get('print')).toBeDefined()
    expect((await ctx.tools.execute([{ id: 'c2', name: 'print', arguments: {} }], { session }))[0].content).toBe(`Bearer ${BEARER}`)
  })
})

/** A read-only tool that prints `text`: a config dump, a log line. */
function printer(text: string) {
  return defineTool({ name: 'print', description: 'Print a text', args: Schema.object({}), traits: { effect: 'read' }, run: () => text })
}

describe('redact: the MCP server plugin\'s http.tokens', () => {
  it('a tool that shows the token answers a client, and the app, with [redacted]', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-redact-'))
    closers.push(() => rm(dir, { recursive: true, force: true }))
    const ctx = new Context()
    guardLogs(ctx)
    closers.push(() => ctx.fiber.dispose())
    await ctx.plugin(DoguPlugin, { audit: { storePath: join(dir, 'audit.jsonl') }, permissions: { storePath: join(dir, 'permissions.json') }, background: { storePath: join(dir, 'background.json') } })
    await ctx.plugin({ name: 'printer', inject: ['tools'], apply: (ctx: Context) => { ctx.tools.define(printer(`the server's config: tokens = [${ADMIN}]`)) } })
    const listening = new Promise<string>((resolve) => ctx.on('dogu-mcp/listening', resolve))
    const server: Fiber = await ctx.plugin(McpServerPlugin as any, { http: { tokens: [{ token: ADMIN, authority: 4 }] } })
    const url = new URL(await listening)

    const client = new Client({ name: 'desk', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${ADMIN}` } } }))
    closers.push(() => client.close())
    const called = await client.callTool({ name: 'print', arguments: {} })
    expect(called.content).toEqual([{ type: 'text', text: 'the server\'s config: tokens = [[redacted]]' }])
    expect((await ctx.tools.execute([{ id: 'c1', name: 'print', arguments: {} }], { session }))[0].content).toBe('the server\'s config: tokens = [[redacted]]')

    await client.close()
    await server.dispose()
    expect((await ctx.tools.execute([{ id: 'c2', name: 'print', arguments: {} }], { session }))[0].content).toBe(`the server's config: tokens = [${ADMIN}]`)
  })
})

describe('redact: the MCP plugins on Koishi', () => {
  it('the server plugin\'s tokens and the client plugin\'s headers are redacted there too', async () => {
    const { app } = await koishiApp()
    const tools = (app as any).tools as Context['tools']
    loadPlugin(app, { name: 'printer', inject: ['tools'], apply: (ctx: any) => { ctx.tools.define(printer(`tokens = [${ADMIN}]`)) } })
    let listening: (url: string) => void
    const url = new Promise<string>((resolve) => { listening = resolve })
    app.on('dogu-mcp/listening' as any, (href: string) => listening(href))
    const server = loadPlugin(app, McpServerPlugin, { http: { tokens: [{ token: ADMIN, authority: 4 }] } })
    await settle(app)
    const client = new Client({ name: 'koishi-test', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(new URL(await url), { requestInit: { headers: { authorization: `Bearer ${ADMIN}` } } }))
    closers.push(() => client.close())
    expect((await client.callTool({ name: 'print', arguments: {} })).content).toEqual([{ type: 'text', text: 'tokens = [[redacted]]' }])

    const echo = await headerEchoServer()
    const importer = loadPlugin(app, McpClientPlugin, { servers: { hdr: { url: echo.href, trusted: true, headers: { Authorization: `Bearer ${BEARER}` } } }, reconnect: { initialDelay: 10, maxDelay: 100 } })
    await expect.poll(() => tools.get('hdr_echo_headers')).toBeDefined()
    const [result] = await tools.execute([{ id: 'c1', name: 'hdr_echo_headers', arguments: {} }], { session })
    expect(result.content).toContain('authorization: [redacted]; x-api-key: undefined; token alone: [redacted]')
    await client.close()
    importer.dispose()
    server.dispose()
    await settle(app)
  })
})
