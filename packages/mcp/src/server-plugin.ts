import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { createMcpServer, type DoguMcpServer, type McpServerOptions } from './mcp-server'
import { McpError } from './mcp-error'
import type { McpBackground } from './mcp-task-store'
import { type CordisHttpServer, mountHttp } from './mount-http'
import type { McpPluginHost } from './plugin-host'
import { type McpToken, serveHttp } from './serve-http'

declare module 'cordis' {
  interface Events<in C extends Context = Context> {
    /** The Streamable HTTP endpoint of `McpServerPlugin` is listening at this URL. */
    'dogu-mcp/listening'(url: string): void
  }
}

export interface Config {
  include?: string[]
  exclude?: string[]
  groups?: string[]
  /** @default 'eager' */
  mode?: 'eager' | 'search'
  /** @default 1 */
  authority?: number
  /** User id of the stdio connection (whoever started the process). @default 'stdio' */
  user?: string
  /** Serve this process's stdin/stdout (what `dogu-mcp` does). @default false */
  stdio?: boolean
  /** Serve Streamable HTTP. */
  http?: {
    /**
     * `node`: its own `node:http` server on `host`:`port`. `server`: a route at `path` of
     * `ctx.server` (`@cordisjs/plugin-server`, Cordis 4), mounted while that service is loaded;
     * `host` and `port` are then the server's. @default 'node'
     */
    via?: 'node' | 'server'
    port?: number
    host?: string
    path?: string
    tokens?: McpToken[]
    /** Browser origins whose pages may call the endpoint; a request with any other `Origin` is refused. */
    origins?: string[]
    /**
     * Milliseconds after which the SSE stream of a tool call still running is closed; the
     * client resumes it with `Last-Event-ID` (SEP-1699). @default 0 (never)
     */
    sseCloseAfter?: number
  }
}

const Token: Schema<McpToken> = Schema.object({
  token: Schema.string().min(16).required().role('secret').description('The bearer token (at least 16 characters).'),
  authority: Schema.natural().description('Authority of connections opened with it. Default: the server\'s `authority`.'),
  user: Schema.string().description('User id of those connections, for rules and grants. Default: `token:<name>`, or `token:<fingerprint>` without a name.'),
  name: Schema.string().pattern(/^[a-zA-Z0-9._-]{1,64}$/).description('A name for the token; without `user`, its connections are `token:<name>`.'),
})

export const Config: Schema<Config> = Schema.object({
  include: Schema.array(String).description('Name globs of the tools served. Empty: all.'),
  exclude: Schema.array(String).description('Name globs of tools not served.'),
  groups: Schema.array(String).description('Tool groups enabled for MCP clients.'),
  mode: Schema.union(['eager', 'search'] as const).default('eager').description('`search`: serve the tools behind `tool_search`.'),
  authority: Schema.natural().default(1).description('Authority of a connection without a token of its own.'),
  user: Schema.string().default('stdio').description('User id of the stdio connection, for rules and grants.'),
  stdio: Schema.boolean().default(false).description('Serve MCP on this process\'s stdin and stdout.'),
  http: Schema.object({
    via: Schema.union(['node', 'server'] as const).default('node').description('`node`: its own HTTP server; `server`: a route of `ctx.server` (@cordisjs/plugin-server).'),
    port: Schema.natural().max(65535).default(0).description('Port; 0 picks a free one.'),
    host: Schema.string().default('127.0.0.1').description('Address to listen on. Anything but loopback needs tokens.'),
    path: Schema.string().default('/mcp'),
    tokens: Schema.array(Token).default([]).description('Bearer tokens and the authority each one gives.'),
    origins: Schema.array(String).default([]).description('Browser origins (`https://app.example`) whose pages may call the endpoint. Any other `Origin` is refused.'),
    sseCloseAfter: Schema.natural().default(0).description('Milliseconds after which a running call\'s SSE stream is closed for the client to resume it (Last-Event-ID). 0: never.'),
  }).description('Streamable HTTP endpoint. Unset: none.'),
}) as Schema<Config>

export const name = 'dogu-mcp-server'
// The form both cordis 3 (Koishi) and cordis 4 read.
export const inject = { tools: { required: true }, permissions: { required: false }, background: { required: false } }

/**
 * Serves the app's tools over MCP (stdio and/or Streamable HTTP) while loaded. Every client
 * connection is a Dogu session whose permission asks go to the client (elicitation) and to
 * every other asker.
 */
export async function apply(ctx: McpPluginHost, config: Config = {}) {
  const server = contextMcpServer(ctx, config)
  // A tool may echo a request's bearer token: it never reaches the model, the log or the console.
  ctx.tools.redact((config.http?.tokens ?? []).map((entry) => entry?.token))
  ctx.effect(() => () => server.close(), 'dogu-mcp-server: close connections')
  if (config.http?.via === 'server') {
    const { path, tokens, origins, sseCloseAfter } = config.http
    if (typeof ctx.inject !== 'function') throw new McpError('INVALID_OPTIONS', 'http.via "server" needs a Cordis 4 app with @cordisjs/plugin-server')
    // Mounted while `ctx.server` is loaded, unmounted when it or this plugin goes away.
    ctx.inject(['server'], async (sub: McpPluginHost & { server: CordisHttpServer }) => {
      const mount = await mountHttp(server, sub.server, { path, tokens, origins, sseCloseAfter })
      sub.effect(() => () => mount.close(), 'dogu-mcp-server: unmount from ctx.server')
      ctx.emit?.(ctx, 'dogu-mcp/listening', mount.url.href)
    })
  } else if (config.http) {
    const endpoint = await serveHttp(server, config.http)
    ctx.effect(() => () => endpoint.close(), 'dogu-mcp-server: stop listening')
    // Where it listens (a port of 0 picks one): `ctx.on('dogu-mcp/listening', (url) => …)`.
    ctx.emit?.(ctx, 'dogu-mcp/listening', endpoint.url.href)
  }
  if (config.stdio) await server.connect(new StdioServerTransport())
}

/**
 * An MCP server over a Cordis or Koishi context's tools: `ctx.tools.toolset`, its
 * `tools/changed`, `tools/call-progress` and `tools/call-log` events, and `ctx.permissions.asker` when Dogu's
 * permissions are loaded, and `ctx.background` (calls as MCP tasks) while it is loaded. The
 * caller closes it; `apply` does this for the plugin.
 */
export function contextMcpServer(ctx: McpPluginHost, config: Omit<McpServerOptions, 'toolset' | 'onChanged' | 'onProgress' | 'onLog' | 'asker'> = {}): DoguMcpServer {
  return createMcpServer({
    ...config,
    toolset: (options) => ctx.tools.toolset(options),
    onChanged: (listener) => ctx.on('tools/changed', listener),
    onProgress: (listener) => ctx.on('tools/call-progress', listener),
    onLog: (listener) => ctx.on('tools/call-log', listener),
    background: config.background ?? (() => backgroundOf(ctx)),
    asker: (asker) => {
      const permissions = ctx.permissions
      // Without Dogu's permissions (a Koishi app has its own `ctx.permissions`), nobody is asked.
      return typeof permissions?.asker === 'function' ? permissions.asker(asker) : () => {}
    },
  })
}

/**
 * The engine of Dogu's `ctx.background` (Cordis 4 or Koishi) while it is loaded: the one the
 * registry hands timed-out calls to. A context that may not read the service (Cordis 4
 * without it in `inject`) has none.
 */
function backgroundOf(ctx: McpPluginHost): McpBackground | undefined {
  try {
    return (ctx as McpPluginHost & { background?: { engine?: McpBackground } }).background?.engine
  } catch {
    return undefined
  }
}
