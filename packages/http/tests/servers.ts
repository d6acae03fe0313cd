import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface TestServer {
  origin: string
  port: number
  /** Requests received, as `METHOD path host`. */
  requests: string[]
  /** Resolves when the client has gone away from the given path's response. */
  closed(path: string): Promise<void>
  close(): Promise<void>
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void

/** A server on 127.0.0.1 only, with the routes the tests need. */
export async function startServer(routes: Record<string, Handler>): Promise<TestServer> {
  const requests: string[] = []
  const waiting = new Map<string, Promise<void>>()
  const resolvers = new Map<string, () => void>()
  const closed = (path: string) => {
    if (!waiting.has(path)) waiting.set(path, new Promise((resolve) => resolvers.set(path, resolve)))
    return waiting.get(path)!
  }
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url!, 'http://x').pathname
    requests.push(`${req.method} ${req.url} ${req.headers.host}`)
    closed(path)
    res.on('close', () => resolvers.get(path)?.())
    let body = ''
    req.on('data', (chunk) => { body += chunk })
    req.on('end', () => {
      const handler = routes[path]
      if (handler) handler(req, res, body)
      else res.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    requests,
    closed,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}
