import { createServer } from 'node:net'

/** A port nothing listens on right now, on 127.0.0.1 (Koishi's server and mariadbd take no port 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}
