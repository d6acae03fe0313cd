// Starts Dogu's MCP server with the demo tools over stdio (the bundled `dogu-mcp` in a child
// process) or Streamable HTTP (in this process), and connects the official SDK client.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { DoguPlugin } from '@dogu/cordis'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js'
import { Context } from 'cordis'
import { build } from 'esbuild'
import { guardLogs, guardOutput, type LogGuard, logGuard } from '../../../test-support/log-guard'
import { contextMcpServer, type McpHttpEndpoint, serveHttp } from '../src'
import * as demoTools from './fixtures/demo-tools.mjs'

export type TransportKind = 'stdio' | 'http'

export interface Harness {
  /** Connects a new SDK client; `elicit` answers the server's elicitations (none: the client does not declare elicitation). */
  connect(options?: { elicit?: (message: string, schema: unknown) => ElicitResult | Promise<ElicitResult>; name?: string; token?: string }): Promise<Client>
  close(): Promise<void>
  /** Over stdio: resolves once what the child printed on stderr before its last answer has been read. */
  flush(): Promise<void>
  endpoint?: McpHttpEndpoint
  /** The log guard: over http it hears the app; over stdio it reads what the child prints on stderr. */
  guard: LogGuard
}

const FIXTURE = resolve(import.meta.dirname, 'fixtures/demo-tools.mjs')

let bundled: Promise<string> | undefined

/** `dogu-mcp` bundled once per test file from the sources, so no build step is needed. */
function bundleCli(dir: string): Promise<string> {
  return bundled ??= (async () => {
    const outfile = join(dir, 'dogu-mcp.mjs')
    await build({
      entryPoints: [resolve(import.meta.dirname, 'fixtures/dogu-mcp-entry.ts')],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      conditions: ['source'],
      // The SDK's CJS dependencies call require: give the ESM bundle one.
      banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
      logLevel: 'error',
    })
    return outfile
  })()
}

export async function startHarness(kind: TransportKind, dir?: string): Promise<Harness> {
  const root = dir ?? await mkdtemp(join(tmpdir(), 'dogu-mcp-'))
  const clients: Client[] = []
  const dogu = { audit: { storePath: join(root, 'audit.jsonl') }, permissions: { storePath: join(root, 'permissions.json'), askTimeout: 20_000 }, background: { storePath: join(root, 'background.json') } }
  const connectClient = async (transport: any, options: Parameters<Harness['connect']>[0] = {}) => {
    const client = new Client({ name: options.name ?? 'test-client', version: '1.0.0' }, { capabilities: options.elicit ? { elicitation: { form: {} } } : {} })
    if (options.elicit) {
      const elicit = options.elicit
      client.setRequestHandler(ElicitRequestSchema, (request) => elicit(request.params.message, (request.params as any).requestedSchema))
    }
    await client.connect(transport)
    clients.push(client)
    return client
  }
  if (kind === 'stdio') {
    const cli = await bundleCli(root)
    const config = join(root, 'dogu-mcp.json')
    await writeFile(config, JSON.stringify({ dogu, plugins: { [FIXTURE]: {} } }))
    return {
      connect: (options) => {
        // Its cwd is the test's folder: a default path of the child's would land there, not in the checkout.
        const transport = new StdioClientTransport({ command: process.execPath, args: [cli, config], cwd: root, stderr: 'pipe' })
        // Whatever dogu-mcp prints there is a warning or an error (stdout carries the protocol).
        guardOutput(transport.stderr!, 'dogu-mcp')
        return connectClient(transport, options)
      },
      guard: logGuard,
      // The child writes stderr before it answers on stdout; both are read in the same turn.
      flush: () => new Promise((resolve) => setImmediate(resolve)),
      async close() {
        await Promise.all(clients.map((client) => client.close()))
        if (!dir) await rm(root, { recursive: true, force: true })
      },
    }
  }
  const ctx = new Context()
  const guard = guardLogs(ctx)
  await ctx.plugin(DoguPlugin, dogu)
  await ctx.plugin(demoTools as any)
  const server = contextMcpServer(ctx as any, {})
  const endpoint = await serveHttp(server, {})
  return {
    endpoint,
    guard,
    flush: async () => {},
    connect: (options = {}) => connectClient(new StreamableHTTPClientTransport(endpoint.url, options.token ? { requestInit: { headers: { authorization: `Bearer ${options.token}` } } } : {}), options),
    async close() {
      await Promise.all(clients.map((client) => client.close()))
      await server.close()
      await endpoint.close()
      await ctx.fiber.dispose()
      if (!dir) await rm(root, { recursive: true, force: true })
    },
  }
}
