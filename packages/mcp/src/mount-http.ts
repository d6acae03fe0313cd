import { once } from 'node:events'
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createHttpHandler, LOOPBACK, loopbackHosts, type McpToken } from './http-handler'
import { McpError } from './mcp-error'
import type { DoguMcpServer } from './mcp-server'

/**
 * The part of `@cordisjs/plugin-server` (Cordis 4's `ctx.server`) the mount uses: a route on
 * every method, and the raw Node request and response behind its wrappers.
 */
export interface CordisHttpServer {
  host: string
  config: { selfUrl?: string }
  _http: HttpServer
  httpRoutes: unknown
  all(path: string, middleware: (
    req: { _req: IncomingMessage; body: ReadableStream<Uint8Array> | null },
    res: { _res: ServerResponse; legacyMode: boolean; status: number },
  ) => Promise<void>): { dispose(): void }
}

export interface MountHttpOptions {
  /** @default '/mcp' */
  path?: string
  /** As for `serveHttp`: needed unless the server listens on loopback. */
  tokens?: McpToken[]
  /** As for `serveHttp`: browser origins whose pages may call the endpoint; any other `Origin` is refused. */
  origins?: string[]
  /** As for `serveHttp`: milliseconds after which a running call's SSE stream is closed for the client to resume. @default 0 (never) */
  sseCloseAfter?: number
}

/** The Streamable HTTP endpoint as a route of `ctx.server`. */
export interface McpHttpMount {
  /** `http://127.0.0.1:<port>/mcp`, or under the server's `selfUrl`. */
  readonly url: URL
  /** Open sessions. */
  readonly sessions: number
  /** Removes the route (later requests get the server's 404) and closes every session. Idempotent. */
  close(): Promise<void>
}

const EMPTY: AsyncIterable<Uint8Array> = { async* [Symbol.asyncIterator]() {} }

/**
 * Serves `server` at `path` of a running `@cordisjs/plugin-server`, with the same tokens,
 * `Host` check and sessions as `serveHttp`. The host and port are the server's.
 */
export async function mountHttp(server: DoguMcpServer, http: CordisHttpServer, options: MountHttpOptions = {}): Promise<McpHttpMount> {
  if (typeof http?.all !== 'function' || !http.httpRoutes || !http._http) {
    throw new McpError('INVALID_OPTIONS', 'http.via is "server" but ctx.server is not @cordisjs/plugin-server (Cordis 4); use http.via "node" (Koishi\'s own server is not supported)')
  }
  const { path = '/mcp', tokens = [], origins = [], sseCloseAfter } = options
  if (!path.startsWith('/')) throw new McpError('INVALID_OPTIONS', `http.path must start with "/": ${path}`)
  const handler = createHttpHandler(server, http.host, tokens, origins, { sseCloseAfter })
  // The server's `listen` is not awaited by its plugin; `once` rejects if it fails instead.
  if (!http._http.listening) await once(http._http, 'listening')
  // A port of 0 is only known from the socket.
  const port = (http._http.address() as AddressInfo).port
  const hosts = loopbackHosts(port)
  if (http.config.selfUrl) hosts.push(new URL(http.config.selfUrl).host)
  if (LOOPBACK.has(http.host)) handler.allowHosts(hosts)
  const route = http.all(path, async (req, res) => {
    // The response is written here, not by the server's own `Response`.
    res.legacyMode = true
    // The server's request wrapper has already taken the Node stream's data: read its body
    // (Node's web streams are async iterable; the DOM typings do not say so).
    const body = (req.body ?? EMPTY) as unknown as AsyncIterable<Uint8Array>
    await handler.handle(req._req, res._res, body)
    // Tells the server the route answered (it would set 405 otherwise).
    res.status = res._res.statusCode
  })
  const base = http.config.selfUrl ?? `http://${http.host === '0.0.0.0' || http.host === '::' ? '127.0.0.1' : http.host.includes(':') ? `[${http.host}]` : http.host}:${port}`
  let closing: Promise<void> | undefined
  return {
    url: new URL(base.replace(/\/$/, '') + path),
    get sessions() {
      return handler.sessions
    },
    close: () => closing ??= (async () => {
      route.dispose()
      await handler.close()
    })(),
  }
}
