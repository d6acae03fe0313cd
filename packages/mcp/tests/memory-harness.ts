// Dogu's MCP server in this process over an in-memory transport, with tools a test defines
// through `ctx.tools`, and the official SDK client. For the server's protocol features
// (logging, elicitation, results); server-harness.ts covers the transports.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DoguPlugin } from '@dogu/cordis'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js'
import { Context } from 'cordis'
import { guardLogs, type LogGuard } from '../../../test-support/log-guard'
import { contextMcpServer, type DoguMcpServer } from '../src'

export interface MemoryHarness {
  ctx: Context
  server: DoguMcpServer
  guard: LogGuard
  /** A new SDK client; `elicit` answers the server's elicitations (none: the client does not declare elicitation). */
  connect(options?: { name?: string; elicit?: (params: { message: string; requestedSchema: unknown }) => ElicitResult | Promise<ElicitResult> }): Promise<Client>
  close(): Promise<void>
}

/** Starts an app with Dogu's services and `define(ctx)`'s tools, served by an MCP server. */
export async function startMemoryHarness(define: (ctx: Context) => void, dogu: Record<string, unknown> = {}): Promise<MemoryHarness> {
  const dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-memory-'))
  const ctx = new Context()
  const guard = guardLogs(ctx)
  await ctx.plugin(DoguPlugin, { audit: { storePath: join(dir, 'audit.jsonl') }, permissions: { storePath: join(dir, 'permissions.json') }, background: { storePath: join(dir, 'background.json') }, ...dogu })
  define(ctx)
  const server = contextMcpServer(ctx as any, {})
  const clients: Client[] = []
  return {
    ctx,
    server,
    guard,
    async connect(options = {}) {
      const [a, b] = InMemoryTransport.createLinkedPair()
      await server.connect(b)
      const client = new Client({ name: options.name ?? 'desk', version: '1' }, { capabilities: options.elicit ? { elicitation: { form: {} } } : {} })
      const elicit = options.elicit
      if (elicit) client.setRequestHandler(ElicitRequestSchema, (request) => elicit(request.params as { message: string; requestedSchema: unknown }))
      await client.connect(a)
      clients.push(client)
      return client
    },
    async close() {
      for (const client of clients.splice(0)) await client.close()
      await server.close()
      await ctx.fiber.dispose()
      await rm(dir, { recursive: true, force: true })
    },
  }
}
