import { join, resolve } from 'node:path'
import { LOG_LEVELS, type Logger, type MinatoDatabase } from '@dogu/core'
import Schema from 'schemastery'
import { headerSecrets } from './header-secrets'
import { McpClientConnection, type McpServerConfig } from './mcp-client-connection'
import type { McpPluginHost } from './plugin-host'
import { FollowingOAuthStore } from './following-oauth-store'
import { EncryptedFileOAuthStore } from './oauth-token-store'

export { type McpReadyOptions, ready } from './client-ready'

/** Where the consoles take the authorization server's redirect back. */
export const OAUTH_CALLBACK_PATH = '/dogu/mcp/oauth/callback'

export interface Config {
  /** MCP servers by name; each one's tools become `<name>_<tool>`. */
  servers: Record<string, McpServerConfig>
  /** Backoff between reconnection attempts (ms). */
  reconnect?: { initialDelay?: number; maxDelay?: number }
  /** Where the OAuth tokens of servers with `auth` are kept, and where their redirect comes back. */
  oauth?: McpOAuthPluginConfig
}

export interface McpOAuthPluginConfig {
  /** The encrypted token file. @default data/dogu/mcp-oauth.json under the working directory */
  storePath?: string
  /** The 32-byte key, base64 or hex (`openssl rand -base64 32`). @default one made in mcp-oauth.key beside the store (mode 0600) */
  key?: string
  /** The redirect URL of servers whose `auth` names none. @default the console server's `/dogu/mcp/oauth/callback` */
  redirectUrl?: string
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
  oauth: Schema.object({
    storePath: Schema.string().description('The encrypted OAuth token file. Default: data/dogu/mcp-oauth.json under the working directory.'),
    key: Schema.string().role('secret').description('Its 32-byte key, base64 or hex. Default: one made in mcp-oauth.key beside it (mode 0600).'),
    redirectUrl: Schema.string().role('link').description('Where authorization servers send the person back. Default: the console server\'s /dogu/mcp/oauth/callback.'),
  }).description('OAuth of servers with `auth`: tokens, encrypted at rest, never in the grant store or the logs.'),
}) as Schema<Config>

export const name = 'dogu-mcp-client'
// The form both cordis 3 (Koishi) and cordis 4 read.
// `server` (optional): the console server whose callback is the default OAuth redirect;
// Cordis 4 refuses to read it undeclared.
export const inject = { tools: { required: true }, server: { required: false } }

/**
 * Imports the tools of the configured MCP servers as Dogu tools while loaded: they go
 * through Dogu's validation and permissions like any other. Servers connect after loading:
 * `await ready(ctx)` waits until their tools are defined. Disposal disconnects every server
 * and ends the processes it started.
 */
export function apply(ctx: McpPluginHost, config: Config) {
  const logger = hostLogger(ctx)
  const servers = Object.entries(config?.servers ?? {})
  const oauth = servers.some(([, server]) => server && 'auth' in server && server.auth !== undefined) ? oauthOf(ctx, config.oauth, logger) : undefined
  const redactedTokens = new Map<string, (() => void)[]>()
  // Every server's config is checked before any starts: one bad entry loads none.
  const connections = servers.map(([name, server]) => new McpClientConnection({
    name,
    server,
    define: (tool) => ctx.tools.define(tool),
    logger,
    reconnect: config.reconnect,
    oauth,
    // Tokens are secrets like headers: `[redacted]` wherever a tool would echo them. Every
    // refresh brings new ones, and each secret costs every result a scan: the set before
    // stays (a call in flight may still echo it), older ones are dropped.
    onTokens: (tokens) => {
      const kept = redactedTokens.get(name) ?? []
      kept.push(ctx.tools.redact(tokens))
      while (kept.length > 2) kept.shift()!()
      redactedTokens.set(name, kept)
    },
  }))
  // A server's tool may echo the request's headers (an error page, a debug tool): their
  // values never reach the model, the log or the console. Tied to this plugin's lifetime.
  ctx.tools.redact(Object.values(config?.servers ?? {}).flatMap((server) => server && 'headers' in server ? headerSecrets(server.headers) : []))
  for (const connection of connections) {
    ctx.tools.addSource?.(connection)
    ctx.effect(() => {
      connection.start()
      // Returned, not dropped: Cordis waits for it, so the child has exited when disposal ends.
      return () => connection.close()
    }, `dogu-mcp-client: server "${connection.name}"`)
  }
}

/**
 * The token store and the default redirect: the console server's callback path, where a
 * server plugin is loaded. The store is the file, or the host's database (`dogu_mcp_oauth`)
 * while one is loaded: a driver that starts late, is reloaded or goes switches it.
 */
function oauthOf(ctx: McpPluginHost, config: McpOAuthPluginConfig = {}, logger: Logger) {
  const storePath = resolve(config.storePath ?? join('data', 'dogu', 'mcp-oauth.json'))
  const store = new FollowingOAuthStore(new EncryptedFileOAuthStore({ path: storePath, key: config.key }), logger)
  // Read without declaring it: a declared service, even an optional one, would restart this
  // plugin (and every connection) on Cordis 4 when a driver starts.
  const database = () => (ctx.get?.('database') ?? undefined) as MinatoDatabase | undefined
  let using = database()
  if (using) void store.use(using)
  ctx.on('internal/service', (name: string) => {
    if (name !== 'database' || database() === using) return
    using = database()
    void store.use(using)
  })
  const server = () => (ctx as McpPluginHost & { server?: ConsoleServer }).server
  return {
    store,
    // Found when an authorization needs it, not now: Koishi's server learns its port only once
    // it listens, and a server plugin may be loaded after this one.
    redirectUrl: config.redirectUrl ?? (() => callbackOf(server())),
  }
}

interface ConsoleServer {
  selfUrl?: string
  config?: { selfUrl?: string }
  host?: string
  port?: number
}

/** The console server's callback URL: its configured selfUrl, else its address once it listens. */
function callbackOf(server: ConsoleServer | undefined): string | undefined {
  if (!server) return undefined
  const host = server.host && server.host !== '0.0.0.0' && server.host !== '::' ? server.host : '127.0.0.1'
  const base = server.config?.selfUrl || (server.port ? `http://${host}:${server.port}` : undefined)
  if (!base) return undefined
  try {
    return new URL(OAUTH_CALLBACK_PATH, base).href
  } catch {
    return undefined
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
