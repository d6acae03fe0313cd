import { randomUUID, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http'
import { isIP } from 'node:net'
import type { AddressInfo } from 'node:net'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js'
import type { ConnectionIdentity } from './mcp-connection'
import { McpError } from './mcp-error'
import type { DoguMcpServer } from './mcp-server'

/** A bearer token and who it makes a connection. */
export interface McpToken extends Partial<ConnectionIdentity> {
  token: string
}

export interface ServeHttpOptions {
  /** @default 0 (any free port) */
  port?: number
  /** Any address but loopback needs `tokens`. @default '127.0.0.1' */
  host?: string
  /** @default '/mcp' */
  path?: string
  /**
   * Bearer tokens. On loopback a request may come without one (the server's default
   * authority); on any other address every request needs one.
   */
  tokens?: McpToken[]
}

/** A listening Streamable HTTP endpoint. */
export interface McpHttpEndpoint {
  /** `http://127.0.0.1:<port>/mcp` */
  readonly url: URL
  readonly http: HttpServer
  /** Stops listening and closes every session it opened. Idempotent. */
  close(): Promise<void>
}

interface HttpSession {
  transport: StreamableHTTPServerTransport
  /** The token that opened it: every later request of the session must carry the same one. */
  token: McpToken | undefined
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost'])

/**
 * Serves `server` over MCP's Streamable HTTP transport at `path`, on `node:http`. Each
 * `initialize` opens a session bound to the token it brought; a request naming a session
 * with another token (or none) is answered 404, as if the session did not exist.
 */
export async function serveHttp(server: DoguMcpServer, options: ServeHttpOptions = {}): Promise<McpHttpEndpoint> {
  const { port = 0, host = '127.0.0.1', path = '/mcp', tokens = [] } = options
  const loopback = LOOPBACK.has(host)
  if (!loopback && !tokens.length) throw new McpError('UNSAFE_LISTEN', `MCP over HTTP on ${host} needs at least one bearer token (http.tokens); only loopback may go without`)
  for (const [i, entry] of tokens.entries()) {
    if (typeof entry?.token !== 'string' || entry.token.length < 16) throw new McpError('INVALID_OPTIONS', `http.tokens[${i}].token must be a string of at least 16 characters`)
  }
  const sessions = new Map<string, HttpSession>()
  let allowedHosts: Set<string> | undefined

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost')
    if (url.pathname !== path) return reply(res, 404, 'not found')
    // A page in a browser may reach a loopback port under another name (DNS rebinding).
    if (allowedHosts && !allowedHosts.has(req.headers.host ?? '')) return reply(res, 403, `invalid Host header: ${req.headers.host}`)
    const presented = bearerOf(req)
    const token = presented === undefined ? undefined : tokens.find((entry) => same(entry.token, presented))
    if (presented !== undefined && !token) return reply(res, 401, 'invalid bearer token', true)
    if (!loopback && !token) return reply(res, 401, 'a bearer token is required', true)
    const id = req.headers['mcp-session-id']
    if (typeof id === 'string') {
      const session = sessions.get(id)
      if (!session || session.token !== token) return reply(res, 404, 'unknown session')
      return session.transport.handleRequest(req, res)
    }
    if (req.method !== 'POST') return reply(res, 400, 'no session: send initialize first')
    const body = await readJson(req)
    if (body === undefined || !isInitializeRequest(body)) return reply(res, 400, 'no session: send initialize first')
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => { sessions.set(sessionId, { transport, token }) },
      onsessionclosed: (sessionId) => { sessions.delete(sessionId) },
    })
    transport.onclose = () => { if (transport.sessionId) sessions.delete(transport.sessionId) }
    await server.connect(transport, token ? { authority: token.authority, user: token.user } : {})
    await transport.handleRequest(req, res, body)
  }

  const http = createServer((req, res) => {
    handle(req, res).catch((error) => {
      if (!res.headersSent) reply(res, 500, error instanceof Error ? error.message : String(error))
      else res.destroy()
    })
  })
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject)
    http.listen(port, host, () => {
      http.off('error', reject)
      resolve()
    })
  })
  const bound = (http.address() as AddressInfo).port
  if (loopback) allowedHosts = new Set([`127.0.0.1:${bound}`, `localhost:${bound}`, `[::1]:${bound}`])
  const shown = isIP(host) === 6 ? `[${host}]` : host
  let closing: Promise<void> | undefined
  return {
    url: new URL(`http://${shown === '0.0.0.0' || shown === '[::]' ? '127.0.0.1' : shown}:${bound}${path}`),
    http,
    close: () => closing ??= (async () => {
      await Promise.all([...sessions.values()].map(({ transport }) => transport.close()))
      sessions.clear()
      await new Promise<void>((resolve) => {
        http.close(() => resolve())
        http.closeAllConnections()
      })
    })(),
  }
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

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > MAX_BODY) return undefined
    chunks.push(chunk as Buffer)
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'))
  } catch {
    return undefined
  }
}

function reply(res: ServerResponse, status: number, message: string, challenge = false) {
  res.writeHead(status, { 'content-type': 'application/json', ...(challenge ? { 'www-authenticate': 'Bearer' } : {}) })
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }))
}
