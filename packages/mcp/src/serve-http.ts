import { createServer, type Server as HttpServer, type ServerResponse } from 'node:http'
import { isIP } from 'node:net'
import type { AddressInfo } from 'node:net'
import { createHttpHandler, LOOPBACK, loopbackHosts, type McpToken } from './http-handler'
import type { DoguMcpServer } from './mcp-server'

export type { McpToken } from './http-handler'

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
  /**
   * Browser origins (`https://app.example`) whose pages may call the endpoint (CORS). A
   * request with any other `Origin` header is refused (403); one without (a non-browser
   * client) is served. @default none
   */
  origins?: string[]
  /**
   * Milliseconds after which the SSE stream of a tool call still running is closed; the
   * client reconnects with `Last-Event-ID` and gets the rest from the session's bounded
   * event store (SEP-1699; clients of protocol 2025-11-25 or later). @default 0 (never)
   */
  sseCloseAfter?: number
}

/** A listening Streamable HTTP endpoint. */
export interface McpHttpEndpoint {
  /** `http://127.0.0.1:<port>/mcp` */
  readonly url: URL
  readonly http: HttpServer
  /** Open sessions. */
  readonly sessions: number
  /** Stops listening and closes every session it opened. Idempotent. */
  close(): Promise<void>
}

/**
 * Serves `server` over MCP's Streamable HTTP transport at `path`, on `node:http`. Each
 * `initialize` opens a session bound to the token it brought; a request naming a session
 * with another token (or none) is answered 404, as if the session did not exist.
 */
export async function serveHttp(server: DoguMcpServer, options: ServeHttpOptions = {}): Promise<McpHttpEndpoint> {
  const { port = 0, host = '127.0.0.1', path = '/mcp', tokens = [], origins = [], sseCloseAfter } = options
  const handler = createHttpHandler(server, host, tokens, origins, { sseCloseAfter })
  const http = createServer((req, res) => {
    if (new URL(req.url ?? '/', 'http://localhost').pathname !== path) return reply404(res)
    void handler.handle(req, res, req)
  })
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject)
    http.listen(port, host, () => {
      http.off('error', reject)
      resolve()
    })
  })
  const bound = (http.address() as AddressInfo).port
  // This port serves the endpoint alone: a page of its own origin cannot exist, so one is
  // served (the MCP spec's localhost check). Mounted beside other routes, it stays foreign.
  if (LOOPBACK.has(host)) handler.allowHosts(loopbackHosts(bound), { ownOrigins: true })
  const shown = isIP(host) === 6 ? `[${host}]` : host
  let closing: Promise<void> | undefined
  return {
    url: new URL(`http://${shown === '0.0.0.0' || shown === '[::]' ? '127.0.0.1' : shown}:${bound}${path}`),
    http,
    get sessions() {
      return handler.sessions
    },
    close: () => closing ??= (async () => {
      await handler.close()
      await new Promise<void>((resolve) => {
        http.close(() => resolve())
        http.closeAllConnections()
      })
    })(),
  }
}

function reply404(res: ServerResponse) {
  res.writeHead(404, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'not found' }, id: null }))
}
