import { createHash, randomUUID, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js'
import { SessionEventStore } from './event-store'
import type { McpConnection } from './mcp-connection'
import { McpError } from './mcp-error'
import { ANONYMOUS, type DoguMcpServer } from './mcp-server'

/** A bearer token and who it makes a connection. */
export interface McpToken {
  token: string
  /** Authority of the connections it opens. @default the server's `authority` */
  authority?: number
  /**
   * The user id its connections act as: what `users:` rules match (`mcp:<user>`) and what
   * `always` grants are kept for. @default `token:<name>`, or `token:<fingerprint>` without a name
   */
  user?: string
  /**
   * A name for the token (letters, digits, `.`, `_`, `-`): without `user`, its connections act
   * as `token:<name>`, which stays the same when the token is rotated.
   */
  name?: string
}

/** What the Streamable HTTP endpoint does besides tokens and origins. */
export interface HttpHandlerOptions {
  /**
   * Milliseconds after which the SSE stream of a `tools/call` still running is closed; the
   * client reconnects after `SSE_RETRY_MS` with `Last-Event-ID` and reads the rest (progress,
   * log lines, the result) from the session's event store (SEP-1699). Only for clients of
   * protocol 2025-11-25 or later. @default 0 (streams stay open until the call ends)
   */
  sseCloseAfter?: number
}

/** The `retry` every SSE stream's priming event tells clients to wait before they reconnect. */
export const SSE_RETRY_MS = 1000

interface HttpSession {
  transport: StreamableHTTPServerTransport
  /** The token that opened it: every later request of the session must carry the same one. */
  token: McpToken | undefined
}

/**
 * The Streamable HTTP endpoint's logic, whatever serves the requests (`node:http` or
 * `@cordisjs/plugin-server`): bearer tokens, the `Host` check, sessions bound to the token
 * that opened them.
 */
export interface McpHttpHandler {
  /**
   * Answers one request. `body` yields the request body (read once, for POST); the caller has
   * already matched the path.
   */
  handle(req: IncomingMessage, res: ServerResponse, body: AsyncIterable<Uint8Array>): Promise<void>
  /**
   * Once the port is known: on loopback, only these `Host` headers are served. With
   * `ownOrigins`, pages of those very origins (`http://127.0.0.1:<port>`, …) are served
   * too: right only where nothing but this endpoint answers on the port (`serveHttp`), so no
   * page of that origin can exist. A rebound name's page has its own origin, refused still.
   */
  allowHosts(hosts: Iterable<string>, options?: { ownOrigins?: boolean }): void
  /** Open sessions. */
  readonly sessions: number
  /** Closes every session. */
  close(): Promise<void>
}

export const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost'])

const TOKEN_NAME = /^[a-zA-Z0-9._-]{1,64}$/

/** The request headers a browser page of an allowed origin may send, and the response headers it may read. */
const CORS_REQUEST_HEADERS = 'authorization, content-type, mcp-session-id, mcp-protocol-version, last-event-id'
const CORS_EXPOSED_HEADERS = 'mcp-session-id, mcp-protocol-version, www-authenticate'

/**
 * Who a token's connections are: its `user`, or else a stable id of the token itself (its
 * `name`, or a fingerprint), never anything the client says about itself.
 */
export function tokenSubject(entry: McpToken): string {
  if (entry.user !== undefined) return entry.user
  if (entry.name !== undefined) return `token:${entry.name}`
  return `token:${createHash('sha256').update(entry.token).digest('hex').slice(0, 16)}`
}

/**
 * Validates `tokens` and `origins` for an endpoint on `host` and returns its handler.
 * `origins` are the browser origins (`https://app.example`) whose pages may call it; a
 * request with any other `Origin` header is refused, one without is served.
 */
export function createHttpHandler(server: DoguMcpServer, host: string, tokens: McpToken[], origins: string[] = [], options: HttpHandlerOptions = {}): McpHttpHandler {
  const loopback = LOOPBACK.has(host)
  const sseCloseAfter = options.sseCloseAfter ?? 0
  if (typeof sseCloseAfter !== 'number' || !Number.isFinite(sseCloseAfter) || sseCloseAfter < 0) {
    throw new McpError('INVALID_OPTIONS', `http.sseCloseAfter must be a number of milliseconds (0: never), got ${JSON.stringify(options.sseCloseAfter)}`)
  }
  if (!loopback && !tokens.length) throw new McpError('UNSAFE_LISTEN', `MCP over HTTP on ${host} needs at least one bearer token (http.tokens); only loopback may go without`)
  const subjects = new Map<McpToken, string>()
  const names = new Set<string>()
  const secrets = new Set<string>()
  for (const [i, entry] of tokens.entries()) {
    if (typeof entry?.token !== 'string' || entry.token.length < 16) throw new McpError('INVALID_OPTIONS', `http.tokens[${i}].token must be a string of at least 16 characters`)
    if (secrets.has(entry.token)) throw new McpError('INVALID_OPTIONS', `http.tokens[${i}].token is listed twice`)
    secrets.add(entry.token)
    if (entry.user !== undefined && (typeof entry.user !== 'string' || !entry.user)) throw new McpError('INVALID_OPTIONS', `http.tokens[${i}].user must be a non-empty string`)
    if (entry.user === ANONYMOUS) throw new McpError('INVALID_OPTIONS', `http.tokens[${i}].user cannot be "${ANONYMOUS}": that is the connections without a token`)
    if (entry.name !== undefined) {
      if (typeof entry.name !== 'string' || !TOKEN_NAME.test(entry.name)) throw new McpError('INVALID_OPTIONS', `http.tokens[${i}].name must match ${TOKEN_NAME}`)
      if (names.has(entry.name)) throw new McpError('INVALID_OPTIONS', `http.tokens[${i}].name "${entry.name}" is taken by another token`)
      names.add(entry.name)
    }
    subjects.set(entry, tokenSubject(entry))
  }
  if (!Array.isArray(origins)) throw new McpError('INVALID_OPTIONS', 'http.origins must be an array of origins')
  const allowedOrigins = new Set(origins.map((origin, i) => originOf(origin, i)))
  const sessions = new Map<string, HttpSession>()
  let allowedHosts: Set<string> | undefined

  const handle = async (req: IncomingMessage, res: ServerResponse, stream: AsyncIterable<Uint8Array>) => {
    // A page in a browser may reach a loopback port under another name (DNS rebinding).
    if (allowedHosts && !allowedHosts.has(req.headers.host ?? '')) return reply(res, 403, `invalid Host header: ${req.headers.host}`)
    // A page of another site may send requests here under the right name (a form, a no-cors
    // fetch, a rebound name): the browser says whose page it is, and only listed ones are served.
    const origin = req.headers.origin
    if (origin !== undefined) {
      if (!allowedOrigins.has(origin)) return reply(res, 403, `origin not allowed: ${origin}`)
      res.setHeader('access-control-allow-origin', origin)
      res.setHeader('access-control-expose-headers', CORS_EXPOSED_HEADERS)
      res.setHeader('vary', 'Origin')
      if (req.method === 'OPTIONS') {
        res.writeHead(204, {
          'access-control-allow-methods': 'GET, POST, DELETE',
          'access-control-allow-headers': CORS_REQUEST_HEADERS,
          'access-control-max-age': '600',
        })
        return void res.end()
      }
    }
    const presented = bearerOf(req)
    const token = presented === undefined ? undefined : tokens.find((entry) => same(entry.token, presented))
    if (presented !== undefined && !token) return reply(res, 401, 'invalid bearer token', true)
    if (!loopback && !token) return reply(res, 401, 'a bearer token is required', true)
    let body: unknown
    if (req.method === 'POST') {
      body = await readJson(stream)
      if (body === undefined) return reply(res, 400, 'the body is not JSON (or over 4 MiB)', false, -32700)
    }
    const id = req.headers['mcp-session-id']
    if (typeof id === 'string') {
      const session = sessions.get(id)
      if (!session || session.token !== token) return reply(res, 404, 'unknown session')
      return session.transport.handleRequest(req, res, body)
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) return reply(res, 400, 'no session: send initialize first')
    // Each session keeps its own events, bounded, for clients that reconnect; gone with the session.
    const eventStore = new SessionEventStore()
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore,
      retryInterval: SSE_RETRY_MS,
      onsessioninitialized: (sessionId) => { sessions.set(sessionId, { transport, token }) },
      onsessionclosed: (sessionId) => { sessions.delete(sessionId) },
    })
    transport.onclose = () => {
      eventStore.clear()
      if (transport.sessionId) sessions.delete(transport.sessionId)
    }
    // The subject is what was authenticated: the token, or the one anonymous subject.
    const connection: McpConnection = await server.connect(transport, token ? { authority: token.authority, user: subjects.get(token)! } : { user: ANONYMOUS }, { sseCloseAfter })
    try {
      await transport.handleRequest(req, res, body)
    } finally {
      // Refused by the SDK (406, 415, …) or failed before a session began: nothing of it stays.
      if (transport.sessionId === undefined || sessions.get(transport.sessionId)?.transport !== transport) await connection.close()
    }
  }

  return {
    async handle(req, res, body) {
      try {
        await handle(req, res, body)
      } catch (error) {
        if (!res.headersSent) reply(res, 500, error instanceof Error ? error.message : String(error))
        else res.destroy()
      }
    },
    allowHosts(hosts, { ownOrigins = false } = {}) {
      if (!loopback) return
      allowedHosts = new Set(hosts)
      if (ownOrigins) for (const allowed of allowedHosts) allowedOrigins.add(`http://${allowed}`)
    },
    get sessions() {
      return sessions.size
    },
    async close() {
      await Promise.all([...sessions.values()].map(({ transport }) => transport.close()))
      sessions.clear()
    },
  }
}

/** An allowed origin as browsers send it: `scheme://host[:port]`, nothing after. */
function originOf(value: string, i: number): string {
  let url: URL | undefined
  try {
    url = new URL(value)
  } catch {
    // refused below
  }
  if (!url || url.origin === 'null' || (url.pathname !== '/' && url.pathname !== '') || url.search || url.hash || url.username || url.password) {
    throw new McpError('INVALID_OPTIONS', `http.origins[${i}] must be an origin such as "https://app.example" or "http://localhost:6274", got ${JSON.stringify(value)}`)
  }
  return url.origin
}

/** The `Host` headers a loopback server on `port` answers to. */
export function loopbackHosts(port: number): string[] {
  return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]
}

function bearerOf(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization
  if (!header) return undefined
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
  return match ? match[1] : ''
}

/** Compares in constant time, so a token cannot be guessed one character at a time. */
function same(expected: string, given: string): boolean {
  const a = Buffer.from(expected)
  const b = Buffer.from(given)
  return a.length === b.length && timingSafeEqual(a, b)
}

const MAX_BODY = 4 * 1024 * 1024

async function readJson(stream: AsyncIterable<Uint8Array>): Promise<unknown> {
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of stream) {
    size += chunk.length
    if (size > MAX_BODY) return undefined
    chunks.push(chunk)
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'))
  } catch {
    return undefined
  }
}

function reply(res: ServerResponse, status: number, message: string, challenge = false, code = -32000) {
  res.writeHead(status, { 'content-type': 'application/json', ...(challenge ? { 'www-authenticate': 'Bearer' } : {}) })
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }))
}
