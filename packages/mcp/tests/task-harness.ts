// The app of the MCP task tests: a tool that runs until the test releases it, on a Cordis 4
// app with every Dogu service, its background records in a directory the test keeps across
// a restart, served over Streamable HTTP with a token per user.
import { join } from 'node:path'
import { DoguPlugin } from '@dogu/cordis'
import type { BackgroundTask } from '@dogu/core'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js'
import { Context } from 'cordis'
import Schema from 'schemastery'
import { guardLogs, type LogGuard } from '../../../test-support/log-guard'
import { contextMcpServer, type McpHttpEndpoint, type McpToken, serveHttp } from '../src'

export const ALICE = 'alice-token-0123456789'
export const BOB = 'bob-token-0123456789ab'
const TOKENS: McpToken[] = [{ token: ALICE, user: 'alice' }, { token: BOB, user: 'bob' }]

/** Calls of `held` waiting for the test, by their `key`. */
export class Gates {
  private waiting = new Map<string, (text: string) => void>()
  private started = new Map<string, () => void>()
  /** Why a held call's signal aborted, by key. */
  readonly aborted = new Map<string, string>()

  hold(key: string, signal: AbortSignal): Promise<string> {
    return new Promise((resolve, reject) => {
      this.waiting.set(key, resolve)
      this.started.get(key)?.()
      signal.addEventListener('abort', () => {
        this.aborted.set(key, signal.reason instanceof Error ? signal.reason.message : String(signal.reason))
        reject(signal.reason)
      }, { once: true })
    })
  }

  /** Resolves once a call with this key is held. */
  running(key: string): Promise<void> {
    if (this.waiting.has(key)) return Promise.resolve()
    return new Promise((resolve) => this.started.set(key, resolve))
  }

  release(key: string, text: string): void {
    const release = this.waiting.get(key)
    if (!release) throw new Error(`no call holds ${key}`)
    release(text)
  }
}

export interface TaskApp {
  ctx: Context
  endpoint: McpHttpEndpoint
  guard: LogGuard
  /** `ctx.background`'s task by id. */
  task(id: string): BackgroundTask | undefined
  /** A new SDK client over HTTP, with a user's token or none; `elicit` answers the server's questions. */
  connect(token?: string, elicit?: (message: string) => ElicitResult): Promise<Client>
  close(): Promise<void>
}

export async function startTaskApp(dir: string, gates: Gates): Promise<TaskApp> {
  const ctx = new Context()
  const guard = guardLogs(ctx)
  await ctx.plugin(DoguPlugin, {
    audit: { storePath: join(dir, 'audit.jsonl') },
    permissions: { storePath: join(dir, 'permissions.json') },
    background: { storePath: join(dir, 'background.json') },
  })
  await ctx.plugin({
    name: 'task-tools',
    inject: ['tools'],
    apply(sub: any) {
      sub.tools.define({
        name: 'held',
        description: 'Runs until the test releases it',
        args: Schema.object({ key: Schema.string().required() }),
        traits: { effect: 'read', background: true, timeout: 60_000 },
        run: ({ key }: { key: string }, call: { signal: AbortSignal }) => gates.hold(key, call.signal),
      })
      sub.tools.define({
        name: 'soon',
        description: 'Moves to the background after 50 ms, then runs until released',
        args: Schema.object({ key: Schema.string().required() }),
        traits: { effect: 'read', background: true, timeout: 50 },
        run: ({ key }: { key: string }, call: { signal: AbortSignal }) => gates.hold(key, call.signal),
      })
      sub.tools.define({
        name: 'stamp',
        description: 'A write: asks first, then runs until released',
        args: Schema.object({ key: Schema.string().required() }),
        traits: { effect: 'write', background: true, timeout: 60_000 },
        run: ({ key }: { key: string }, call: { signal: AbortSignal }) => gates.hold(key, call.signal),
      })
      sub.tools.define({
        name: 'quick',
        description: 'Answers at once',
        args: Schema.object({ word: Schema.string().required() }),
        traits: { effect: 'read', background: true },
        run: ({ word }: { word: string }) => `quick ${word}`,
      })
      sub.tools.define({
        name: 'plain',
        description: 'Never moves to the background',
        traits: { effect: 'read', background: false },
        run: () => 'plain',
      })
    },
  })
  const server = contextMcpServer(ctx as any, {})
  const endpoint = await serveHttp(server, { tokens: TOKENS })
  const clients: Client[] = []
  return {
    ctx,
    endpoint,
    guard,
    task: (id) => (ctx as any).background.get(id),
    async connect(token, elicit) {
      const client = new Client({ name: 'task-client', version: '1.0.0' }, { capabilities: elicit ? { elicitation: { form: {} } } : {} })
      if (elicit) client.setRequestHandler(ElicitRequestSchema, (request) => elicit(request.params.message))
      await client.connect(new StreamableHTTPClientTransport(endpoint.url, token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {}))
      clients.push(client)
      return client
    },
    async close() {
      await Promise.all(clients.map((client) => client.close()))
      await server.close()
      await endpoint.close()
      await ctx.fiber.dispose()
    },
  }
}
