// W3C trace context in an MCP call's `_meta` (SEP-414), both ways: an imported tool's call
// sends its span's (the MCP server, in memory on the SDK's low-level Server, records what it
// received), and Dogu's MCP server makes a client's the parent of the call's span.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defineTool } from '@dogu/core'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import type { Context } from 'cordis'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { installOtel, type InstalledOtel } from '../../../test-support/otel'
import { contextMcpServer, type DoguMcpServer, McpClientConnection } from '../src'
import { doguApp } from './client-harness'

const session = { id: 'cli', userId: 'alice' }

describe('imported MCP tools: trace context in _meta', () => {
  let dir: string
  let ctx: Context
  let server: Server
  let connection: McpClientConnection
  let received: Array<Record<string, unknown> | undefined>
  let otel: InstalledOtel | undefined

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-telemetry-'))
    ctx = await doguApp(dir, [{ permission: 'tool:remote_*', decision: 'allow' }])
    received = []
    server = new Server({ name: 'remote', version: '1.0.0' }, { capabilities: { tools: {} } })
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: 'echo', description: 'Echoes', inputSchema: { type: 'object', properties: {} } }] }))
    server.setRequestHandler(CallToolRequestSchema, (request) => {
      received.push(request.params._meta)
      return { content: [{ type: 'text', text: 'echoed' }] }
    })
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await server.connect(serverSide)
    connection = new McpClientConnection({ name: 'remote', server: { command: 'unused' }, define: (tool) => ctx.tools.define(tool), transport: () => clientSide })
    connection.start()
    await connection.connected(AbortSignal.timeout(10_000))
  })

  afterEach(async () => {
    await otel?.uninstall()
    otel = undefined
    await connection.close()
    await server.close()
    await ctx.fiber.dispose()
    await rm(dir, { recursive: true, force: true })
  })

  const call = async () => (await ctx.tools.execute([{ id: 'c1', name: 'remote_echo', arguments: {} }], { session }))[0]

  it('traced: _meta.traceparent names the call span, beside the SDK\'s progress token', async () => {
    otel = installOtel()
    expect(await call()).toMatchObject({ status: 'ok', content: 'echoed' })
    const { traceId, spanId } = otel.span('dogu.tool remote_echo').spanContext()
    expect(received).toEqual([{ traceparent: `00-${traceId}-${spanId}-01`, progressToken: expect.anything() }])
  })

  it('not traced: no trace context is sent', async () => {
    expect(await call()).toMatchObject({ status: 'ok' })
    expect(received).toEqual([{ progressToken: expect.anything() }])
  })
})

describe('Dogu\'s MCP server: a client\'s traceparent is the parent of the call\'s span', () => {
  const TRACE = '0af7651916cd43dd8448eb211c80319c'
  const PARENT = 'b7ad6b7169203331'
  let dir: string
  let ctx: Context
  let server: DoguMcpServer
  let client: Client
  let otel: InstalledOtel

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-telemetry-'))
    ctx = await doguApp(dir)
    ctx.tools.define(defineTool({ name: 'echo', description: 'Echoes', traits: { effect: 'read' }, run: () => 'echoed' }))
    server = contextMcpServer(ctx as any, {})
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await server.connect(serverSide)
    client = new Client({ name: 'sdk', version: '1' })
    await client.connect(clientSide)
    otel = installOtel()
  })

  afterEach(async () => {
    await otel.uninstall()
    await client.close()
    await server.close()
    await ctx.fiber.dispose()
    await rm(dir, { recursive: true, force: true })
  })

  it('with tracestate: the span joins the client\'s trace under its span', async () => {
    await client.callTool({ name: 'echo', arguments: {}, _meta: { traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: 'vendor=x' } })
    const span = otel.span('dogu.tool echo')
    expect(span.spanContext().traceId).toBe(TRACE)
    expect(span.parentSpanContext).toMatchObject({ traceId: TRACE, spanId: PARENT, isRemote: true })
    expect(span.spanContext().traceState?.get('vendor')).toBe('x')
  })

  it('a malformed traceparent is ignored: the call runs, in a trace of its own', async () => {
    const result = await client.callTool({ name: 'echo', arguments: {}, _meta: { traceparent: `00-${TRACE}-${'0'.repeat(16)}-01` } })
    expect((result.content as Array<{ text: string }>)[0].text).toBe('echoed')
    const span = otel.span('dogu.tool echo')
    expect(span.spanContext().traceId).not.toBe(TRACE)
    expect(span.parentSpanContext).toBeUndefined()
  })
})
