import { LOG_LEVELS, type Logger } from '@dogu/core'
import Schema from 'schemastery'
import { headerSecrets } from './header-secrets'
import { McpClientConnection, type McpServerConfig } from './mcp-client-connection'
import type { McpPluginHost } from './plugin-host'

export interface Config {
  /** MCP servers by name; each one's tools become `<name>_<tool>`. */
  servers: Record<string, McpServerConfig>
  /** Backoff between reconnection attempts (ms). */
  reconnect?: { initialDelay?: number; maxDelay?: number }
}

const common = {
  trusted: Schema.boolean().default(false).description('Take the server\'s tool annotations as traits. Untrusted: every tool is `exec` and asks.'),
  requestTimeout: Schema.natural().min(1).role('ms').default(60_000).description('Milliseconds without a result or progress before a call fails.'),
  timeout: Schema.natural().min(1).role('ms').default(180_000).description('Dogu timeout of each imported tool.'),
  logLevel: Schema.union([...LOG_LEVELS]).default('info').description('The lowest level of the server\'s log messages to receive (when it logs): during a call they are the call\'s log, otherwise lines of this plugin\'s log.'),
}

const Server: Schema<McpServerConfig> = Schema.union([
  Schema.object({
    command: Schema.string().required().description('The command that starts the server (stdio).'),
    args: Schema.array(String).default([]),
    env: Schema.dict(String).description('Environment variables beside a safe default set (PATH, HOME, …).'),
    cwd: Schema.string(),
    ...common,
  }),
  Schema.object({
    url: Schema.string().role('link').required().description('The server\'s Streamable HTTP endpoint.'),
    headers: Schema.dict(String).description('Headers of every request (Authorization: Bearer …).'),
    auth: Schema.union([
      Schema.const('oauth').description('OAuth: discover the authorization server and register.'),
      Schema.object({
        clientId: Schema.string().description('A client registered beforehand.'),
        clientSecret: Schema.string().role('secret').description('That client\'s secret.'),
        scopes: Schema.array(String).description('Scopes to ask for (by default the server\'s).'),
        redirectUrl: Schema.string().role('link').description('Where the authorization server sends the person back (by default the console\'s /dogu/mcp/oauth/callback).'),
        clientMetadataUrl: Schema.string().role('link').description('An https URL of this client\'s metadata document, used as client id where the server supports it.'),
        clientName: Schema.string().description('The name the authorization page shows.'),
      }).description('OAuth with what the server\'s owner gave you.'),
    ]).description('OAuth 2.1 (the MCP authorization spec); a person authorizes in the console.'),
    ...common,
  }),
]) as Schema<McpServerConfig>

export const Config: Schema<Config> = Schema.object({
  servers: Schema.dict(Server).default({}).description('MCP servers by name (letters, digits, `-`).'),
  reconnect: Schema.object({
    initialDelay: Schema.natural().min(1).role('ms').default(500),
    maxDelay: Schema.natural().min(1).role('ms').default(30_000),
  }),
}) as Schema<Config>

export const name = 'dogu-mcp-client'
// The form both cordis 3 (Koishi) and cordis 4 read.
export const inject = { tools: { required: true } }

/**
 * Imports the tools of the configured MCP servers as Dogu tools while loaded: they go
 * through Dogu's validation and permissions like any other. Disposal disconnects every
 * server and ends the processes it started.
 */
export function apply(ctx: McpPluginHost, config: Config) {
  const logger = hostLogger(ctx)
  // Every server's config is checked before any starts: one bad entry loads none.
  const connections = Object.entries(config?.servers ?? {}).map(([name, server]) => new McpClientConnection({
    name,
    server,
    define: (tool) => ctx.tools.define(tool),
    logger,
    reconnect: config.reconnect,
  }))
  // A server's tool may echo the request's headers (an error page, a debug tool): their
  // values never reach the model, the log or the console. Tied to this plugin's lifetime.
  ctx.tools.redact(Object.values(config?.servers ?? {}).flatMap((server) => server && 'headers' in server ? headerSecrets(server.headers) : []))
  for (const connection of connections) {
    ctx.effect(() => {
      connection.start()
      // Returned, not dropped: Cordis waits for it, so the child has exited when disposal ends.
      return () => connection.close()
    }, `dogu-mcp-client: server "${connection.name}"`)
  }
}

type Write = (format: string, ...args: unknown[]) => void

/**
 * Where the host shows warnings (and servers' own log lines outside calls): Koishi (cordis 3,
 * no `ctx.fiber`) on its logger service, as `[dogu-mcp] …`; Cordis 4 as `internal/warn` and
 * `internal/info` events, which it neither logs nor prints on Koishi.
 */
function hostLogger(ctx: McpPluginHost): Logger {
  const koishi = ctx as McpPluginHost & { logger?: (name: string) => { debug: Write; info: Write; warn: Write } }
  if (!('fiber' in ctx) && typeof koishi.logger === 'function') {
    const logger = koishi.logger('dogu-mcp')
    return { debug: (format, ...args) => logger.debug(format, ...args), info: (format, ...args) => logger.info(format, ...args), warn: (format, ...args) => logger.warn(format, ...args) }
  }
  return {
    debug() {},
    info: (format, ...args) => ctx.emit?.(ctx, 'internal/info', format, ...args),
    warn: (format, ...args) => ctx.emit?.(ctx, 'internal/warn', format, ...args),
  }
}
