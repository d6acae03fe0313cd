import { randomUUID, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js'
import type { ConnectionIdentity } from './mcp-connection'
import { McpError } from './mcp-error'
import type { DoguMcpServer } from './mcp-server'

/** A bearer token and who it makes a connection. */
export interface McpToken extends Partial<ConnectionIdentity> {
  token: string
}

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
  /** Once the port is known: on loopback, only these `Host` headers are served. */
  allowHosts(hosts: Iterable<string>): void
  /** Closes every session. */
  close(): Promise<void>
}

export const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost'])

/** Validates `tokens` for an endpoint on `host` and returns its handler. */
export function createHttpHandler(server: DoguMcpServer, host: string, tokens: McpToken[]): McpHttpHandler {
  const loopback = LOOPBACK.has(host)
  if (!loopback && !tokens.length) throw new McpError('UNSAFE_LISTEN', `MCP over HTTP on ${host} needs at least one bearer token (http.tokens); only loopback may go without`)
  for (const [i, entry] of tokens.entries()) {
    if (typeof entry?.token !== 'string' || entry.token.length < 16) throw new McpError('INVALID_OPTIONS', `http.tokens[${i}].token must be a string of at least 16 characters`)
  }
  const sessions = new Map<string, HttpSession>()
  let allowedHosts: Set<string> | undefined

  const handle = async (req: IncomingMessage, res: ServerResponse, stream: AsyncIterable<Uint8Array>) => {
    // A page in a browser may reach a loopback port under another name (DNS rebinding).
    if (allowedHosts && !allowedHosts.has(req.headers.host ?? '')) return reply(res, 403, `invalid Host header: ${req.headers.host}`)
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
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => { sessions.set(sessionId, { transport, token }) },
      onsessionclosed: (sessionId) => { sessions.delete(sessionId) },
    })
    transport.onclose = () => { if (transport.sessionId) sessions.delete(transport.sessionId) }
    await server.connect(transport, token ? { authority: token.authority, user: token.user } : {})
    await transport.handleRequest(req, res, body)
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
    allowHosts(hosts) {
      if (loopback) allowedHosts = new Set(hosts)
    },
    async close() {
      await Promise.all([...sessions.values()].map(({ transport }) => transport.close()))
      sessions.clear()
    },
  }
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
