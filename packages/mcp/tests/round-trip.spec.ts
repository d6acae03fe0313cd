import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DoguPlugin, PermissionService, ToolService } from '@dogu/cordis'
import type { PermissionRequest, ToolResult } from '@dogu/core'
import { Context } from 'cordis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { contextMcpServer, type DoguMcpServer, type McpClientConnection, McpClientConnection as Connection, type McpHttpEndpoint, serveHttp } from '../src'
import * as demoTools from './fixtures/demo-tools.mjs'

/**
 * Dogu → MCP → Dogu: the demo tools served over Streamable HTTP and imported by another
 * Dogu app from a trusted server give what a direct call gives: the same statuses, texts
 * and data, the same denials, and a write is approved by the same kind of answer.
 */
describe('Dogu → MCP → Dogu, the server trusted', () => {
  let dir: string
  let inner: Context
  let outer: Context
  let server: DoguMcpServer
  let endpoint: McpHttpEndpoint
  let connection: McpClientConnection
  const asked: { app: string; tool: string; reason: string }[] = []
  const answers = new Map<string, 'allow' | 'deny'>()

  const asker = (app: string, only?: string) => (request: Readonly<PermissionRequest>) => {
    if (only && request.session.id !== only) return
    asked.push({ app, tool: request.tool, reason: request.reason })
    return { decision: answers.get(request.tool) ?? 'deny', by: request.session.userId ?? 'owner' } as const
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-round-'))
    inner = new Context()
    guardLogs(inner)
    await inner.plugin(DoguPlugin, { audit: { storePath: join(dir, 'audit.jsonl') }, background: { storePath: join(dir, 'inner-background.json') }, permissions: { storePath: join(dir, 'inner.json'), rules: [{ permission: 'tool:deploy', target: undefined, decision: 'deny', name: 'no deploys' }] } })
    await inner.plugin(demoTools as any)
    // The inner app's own asker answers only its direct calls; MCP sessions are asked by elicitation.
    inner.permissions.asker(asker('inner', 'direct'))
    server = contextMcpServer(inner as any, {})
    endpoint = await serveHttp(server, {})

    outer = new Context()
    guardLogs(outer)
    await outer.plugin(ToolService)
    await outer.plugin(PermissionService, { storePath: join(dir, 'outer.json') })
    outer.permissions.asker(asker('outer'))
    connection = new Connection({ name: 'demo', server: { url: endpoint.url.href, trusted: true }, define: (tool) => outer.tools.define(tool), reconnect: { initialDelay: 10, maxDelay: 100 } })
    connection.start()
    await connection.connected(AbortSignal.timeout(20_000))
  })
  afterAll(async () => {
    await connection?.close()
    await server?.close()
    await endpoint?.close()
    await outer?.fiber.dispose()
    await inner?.fiber.dispose()
    await rm(dir, { recursive: true, force: true })
  })

  // Timings differ by nature; what the model reads must not.
  const strip = ({ id, name, durationMs, waitMs, ...rest }: ToolResult) => rest
  const direct = async (name: string, args: Record<string, unknown>) => strip((await inner.tools.execute([{ id: 'd', name, arguments: args }], { session: { id: 'direct', userId: 'alice' } }))[0])
  const bridged = async (name: string, args: Record<string, unknown>) => strip((await outer.tools.execute([{ id: 'b', name: `demo_${name}`, arguments: args }], { session: { id: 'chat', userId: 'alice' } }))[0])

  it('imports every tool with the traits its annotations carry', () => {
    expect(connection.tools).toEqual(['demo_broken', 'demo_cancellations', 'demo_deploy', 'demo_grow', 'demo_lookup', 'demo_notes', 'demo_picture', 'demo_slow', 'demo_task_cancel', 'demo_task_status', 'demo_whoami'])
    for (const name of ['lookup', 'notes', 'deploy']) expect(outer.tools.get(`demo_${name}`)!.traits.effect).toBe(inner.tools.get(name)!.traits.effect)
  })

  it.each([
    ['lookup', { q: 'tea' }],
    ['picture', {}],
    ['broken', {}],
  ])('%s(%o) gives the same result either way', async (name, args) => {
    const expected = await direct(name, args)
    expect(await bridged(name, args)).toEqual(expected)
  })

  it('bad arguments are refused on the calling side with the same verdict and path', async () => {
    const expected = await direct('lookup', { q: '' })
    const got = await bridged('lookup', { q: '' })
    expect(got).toMatchObject({ status: expected.status, code: 'invalid_arguments' })
    // The imported schema checks `minLength` as a code-point pattern (JSON Schema counts code
    // points, schemastery's min counts UTF-16 units), so the wording differs; the path does not.
    expect(expected.content).toBe('Invalid arguments:\n- $.q: expected at least 1 characters, got 0')
    expect(got.content).toBe('Invalid arguments:\n- $.q: must match the pattern /^(?=[\\s\\S]{1,}$)/u (got "")')
  })

  it('a deny rule on the serving side denies the same way', async () => {
    const expected = await direct('deploy', { env: 'prod' })
    expect(expected).toEqual({ status: 'denied', code: 'permission_denied', content: expect.stringContaining('Permission denied:'), params: expect.objectContaining({ cause: 'rule' }) })
    answers.set('demo_deploy', 'allow')
    expect(await bridged('deploy', { env: 'prod' })).toEqual(expected)
  })

  it('a write: approved on both sides it runs with the same result; declined, it is denied', async () => {
    answers.set('notes', 'allow')
    answers.set('demo_notes', 'allow')
    asked.length = 0
    const expected = await direct('notes', { text: 'hi' })
    expect(expected).toEqual({ status: 'ok', content: 'saved hi', data: { saved: 'hi', length: 2 } })
    expect(await bridged('notes', { text: 'hi' })).toEqual(expected)
    // The direct call asked once; the bridged one asked the outer app for the tool, then for
    // the serving side's elicitation, which reached the outer app's asker through the client.
    expect(asked.map(({ app, tool }) => `${app}:${tool}`)).toEqual(['inner:notes', 'outer:demo_notes', 'outer:demo_notes'])
    expect(asked[2].reason).toMatch(/^MCP server "demo" asks: Allow notes\(text=hi\)\? /)

    answers.set('notes', 'deny')
    const denied = await direct('notes', { text: 'no' })
    expect(denied.status).toBe('denied')
    answers.set('demo_notes', 'deny')
    expect((await bridged('notes', { text: 'no' })).status).toBe('denied')
  })

  it('a server that restarts (its sessions forgotten): the failed call says so, and the client reconnects', async () => {
    const port = Number(endpoint.url.port)
    await server.close()
    await endpoint.close()
    server = contextMcpServer(inner as any, {})
    endpoint = await serveHttp(server, { port })
    const [failed] = await outer.tools.execute([{ id: 'r', name: 'demo_lookup', arguments: { q: 'tea' } }], { session: { id: 'chat' } })
    expect(failed).toMatchObject({ status: 'error', code: 'tool_error' })
    expect(failed.content).toMatch(/^Error: the MCP server "demo" could not be reached \(Streamable HTTP error: Error POSTing to endpoint: .*unknown session.*\); reconnecting$/)
    await connection.connected(AbortSignal.timeout(10_000))
    expect(await bridged('lookup', { q: 'tea' })).toEqual(await direct('lookup', { q: 'tea' }))
  })
})
