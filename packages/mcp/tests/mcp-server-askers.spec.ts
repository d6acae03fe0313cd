import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { format } from 'node:util'
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
    await ctx.plugin(DoguPlugin, { audit: { storePath: join(dir, 'audit.jsonl') }, permissions: { storePath: join(dir, 'permissions.json') }, background: { storePath: join(dir, 'background.json') } })
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

  it('a call from outside MCP is not the MCP asker\'s: with no other asker, it is denied at once, saying nobody could be asked', async () => {
    await connect(() => new Promise<never>(() => {}))
    const infos = infoLines()
    const [result] = await ctx.tools.execute([{ id: 'x', name: 'notes', arguments: { text: 'hi' } }], { session: { id: 'chat-1', userId: 'u' } })
    expect(result.status).toBe('denied')
    expect(result.content).toBe('Permission denied: nobody could be asked to approve notes (session chat-1 is not an MCP session of this server)')
    // Expected, so no warning (the guard would fail the test): one info line, without a stack.
    expect(infos).toEqual([expect.stringMatching(/^permission request perm_\S+ \(notes\(text=hi\)\) of session chat-1 cannot be shown by one of its askers: session chat-1 is not an MCP session of this server$/)])
  })

  it('a client that declared no elicitation: one info line, and the model reads that nobody could be asked', async () => {
    const client = await connect()
    const infos = infoLines()
    const result = await client.callTool({ name: 'notes', arguments: { text: 'hi' } })
    expect(result).toMatchObject({ isError: true, content: [{ type: 'text', text: 'Permission denied: nobody could be asked to approve notes (the MCP client cannot show questions: it declared no elicitation)' }] })
    expect(infos).toEqual([expect.stringMatching(/^permission request perm_\S+ \(notes\(text=hi\)\) of session mcp:desk:\S+ cannot be shown by one of its askers: the MCP client cannot show questions: it declared no elicitation$/)])
  })

  it('beside an asker that really fails, that failure stays a warning with its error', async () => {
    const client = await connect()
    const infos = infoLines()
    ctx.permissions.asker(async () => { throw new Error('the chat is offline') })
    guardLogs(ctx).expect(/^\[PermissionService\] an asker failed on permission request perm_\S+ \(notes\(text=hi\)\): Error: the chat is offline$/)
    const result = await client.callTool({ name: 'notes', arguments: { text: 'hi' } })
    expect(result).toMatchObject({ isError: true, content: [{ type: 'text', text: 'Permission denied: every asker failed to show the permission request (last error: the chat is offline)' }] })
    expect(infos).toHaveLength(1)
  })

  /** The app's info lines from now on, formatted. */
  function infoLines(): string[] {
    const lines: string[] = []
    ctx.on('internal/info' as any, (...args: unknown[]) => { lines.push(format(...args)) })
    return lines
  }

  it('the asker is registered while a connection is open, and removed with the last one', async () => {
    const before = await ctx.tools.execute([{ id: 'x', name: 'notes', arguments: { text: 'a' } }], { session: { id: 'chat-1' } })
    expect(before[0].content).toBe('Permission denied: it needs a person\'s approval (no rule matches; write tools need approval by default), but no asker is registered to ask anyone: register one with ctx.permissions.asker(...) (see docs/permissions.md)')
    const client = await connect()
    await client.close()
    clients.length = 0
    const after = await ctx.tools.execute([{ id: 'y', name: 'notes', arguments: { text: 'a' } }], { session: { id: 'chat-1' } })
    expect(after[0].content).toBe(before[0].content)
  })
})
