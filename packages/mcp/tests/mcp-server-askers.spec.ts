import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DoguPlugin } from '@dogu/cordis'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { Context } from 'cordis'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { contextMcpServer, type DoguMcpServer } from '../src'
import * as demoTools from './fixtures/demo-tools.mjs'

describe('the MCP server\'s asker: plural askers, first answer wins', () => {
  let dir: string
  let ctx: Context
  let server: DoguMcpServer
  const clients: Client[] = []

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-askers-'))
    ctx = new Context()
    guardLogs(ctx)
    await ctx.plugin(DoguPlugin, { audit: { storePath: join(dir, 'audit.jsonl') }, permissions: { storePath: join(dir, 'permissions.json') } })
    await ctx.plugin(demoTools as any)
    server = contextMcpServer(ctx as any, {})
  })
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close()
    await server.close()
    await ctx.fiber.dispose()
    await rm(dir, { recursive: true, force: true })
  })

  async function connect(elicit?: (signal: AbortSignal) => Promise<never>) {
    const [a, b] = InMemoryTransport.createLinkedPair()
    await server.connect(b)
    const client = new Client({ name: 'desk', version: '1' }, { capabilities: elicit ? { elicitation: { form: {} } } : {} })
    if (elicit) client.setRequestHandler(ElicitRequestSchema, (_request, extra) => elicit(extra.signal))
    await client.connect(a)
    clients.push(client)
    return client
  }

  it('another asker answering first settles the request, and the client\'s elicitation is cancelled', async () => {
    let shown!: () => void
    const elicitationShown = new Promise<void>((resolve) => { shown = resolve })
    let cancelled!: (reason: unknown) => void
    const elicitationCancelled = new Promise<unknown>((resolve) => { cancelled = resolve })
    let elicitations = 0
    const client = await connect((signal) => {
      // The SDK ignores notifications/cancelled for request id 0 (`if (!requestId) return`),
      // so the first elicitation, id 0, is answered here, and the second one is the test.
      if (elicitations++ === 0) return Promise.resolve({ action: 'accept', content: { decision: 'once' } }) as never
      shown()
      return new Promise<never>((_resolve, reject) => signal.addEventListener('abort', () => {
        cancelled(signal.reason)
        reject(signal.reason)
      }, { once: true }))
    })
    // A chat asker: it answers once the client has been asked too.
    ctx.permissions.asker(async (request) => {
      if (request.summary !== 'notes(text=second)') return
      await elicitationShown
      return { decision: 'allow', by: { id: 'owner', authority: 5 }, scope: 'once' }
    })
    expect(await client.callTool({ name: 'notes', arguments: { text: 'first' } })).toMatchObject({ content: [{ type: 'text', text: 'saved first' }] })
    const result = await client.callTool({ name: 'notes', arguments: { text: 'second' } })
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'saved second' }] })
    expect(String(await elicitationCancelled)).toMatch(/^Error: permission request ended: approved by owner \(once\)$/)
    expect(elicitations).toBe(2)
  })

  it('a call from outside MCP is not the MCP asker\'s: with no other asker, it is denied at once', async () => {
    await connect(() => new Promise<never>(() => {}))
    guardLogs(ctx).expect(/^\[PermissionService\] an asker failed on permission request perm_\S+ \(notes\(text=hi\)\): McpError: session chat-1 is not an MCP session of this server$/)
    const [result] = await ctx.tools.execute([{ id: 'x', name: 'notes', arguments: { text: 'hi' } }], { session: { id: 'chat-1', userId: 'u' } })
    expect(result.status).toBe('denied')
    expect(result.content).toBe('Permission denied: every asker failed to show the permission request (last error: session chat-1 is not an MCP session of this server)')
  })

  it('the asker is registered while a connection is open, and removed with the last one', async () => {
    const before = await ctx.tools.execute([{ id: 'x', name: 'notes', arguments: { text: 'a' } }], { session: { id: 'chat-1' } })
    expect(before[0].content).toBe('Permission denied: it needs a person\'s approval (no rule matches; write tools need approval by default), but no asker is registered to ask anyone')
    const client = await connect()
    await client.close()
    clients.length = 0
    const after = await ctx.tools.execute([{ id: 'y', name: 'notes', arguments: { text: 'a' } }], { session: { id: 'chat-1' } })
    expect(after[0].content).toBe(before[0].content)
  })
})
