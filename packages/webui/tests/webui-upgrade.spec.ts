import { afterEach, describe, expect, it } from 'vitest'
import { request } from 'node:http'
import { connect } from 'node:net'
import { startConsoleApp } from './console-app'

let app: Awaited<ReturnType<typeof startConsoleApp>> | undefined

afterEach(async () => {
  await app?.dispose()
  app = undefined
})

interface UpgradeAnswer {
  /** The status the server answered with; 101 means it switched protocols. */
  status: number
  body: string
  /** True once the server closed the connection. */
  closed: boolean
}

/**
 * Sends an upgrade request the way a WebSocket client does, and resolves once the server
 * has answered and closed the socket (or with `closed: false` when it kept it open for
 * 2 seconds after switching protocols).
 */
function upgrade(url: string, headers: Record<string, string> = {}, protocol = 'websocket'): Promise<UpgradeAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      headers: {
        connection: 'Upgrade',
        upgrade: protocol,
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        'sec-websocket-version': '13',
        ...headers,
      },
      timeout: 10_000,
    })
    req.on('timeout', () => req.destroy(new Error('timed out')))
    req.on('error', reject)
    req.on('upgrade', (res, socket) => {
      // The server switched protocols: see whether it keeps the socket open.
      const timer = setTimeout(() => {
        socket.destroy()
        resolve({ status: res.statusCode!, body: '', closed: false })
      }, 2_000)
      socket.on('close', () => {
        clearTimeout(timer)
        resolve({ status: res.statusCode!, body: '', closed: true })
      })
    })
    req.on('response', (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (chunk) => { body += chunk })
      const socket = res.socket
      const timer = setTimeout(() => {
        socket.destroy()
        resolve({ status: res.statusCode!, body, closed: false })
      }, 10_000)
      socket.once('close', () => {
        clearTimeout(timer)
        resolve({ status: res.statusCode!, body, closed: true })
      })
    })
    req.end()
  })
}

describe('WebUI upgrades', () => {
  it('refuses a WebSocket upgrade on every path, with 400 and the socket closed', async () => {
    app = await startConsoleApp()
    const origin = new URL(app.base).origin
    for (const path of ['/dogu', '/dogu/', '/dogu/api/tools.list', '/dogu/api/call?x=1', '/', '/socket.io/?EIO=4', '/elsewhere', '/%64ogu']) {
      const answer = await upgrade(origin + path)
      expect({ path, status: answer.status, closed: answer.closed }).toEqual({ path, status: 400, closed: true })
      expect(answer.body).toMatch(/accepts no protocol upgrade/)
    }
  })

  it('refuses upgrades with a foreign Host or Origin, with a token, and to other protocols', async () => {
    app = await startConsoleApp({ token: 'a-console-token-1234' })
    const url = `${app.base}/api/tools.list`
    const attempts: Record<string, string>[] = [
      { host: 'evil.example:80' },
      { origin: 'http://evil.example' },
      { host: 'evil.example', origin: 'http://evil.example' },
      { 'x-dogu-token': 'a-console-token-1234' },
      { 'x-dogu-token': 'a-console-token-1234', origin: new URL(app.base).origin },
    ]
    for (const headers of attempts) {
      const answer = await upgrade(url, headers)
      expect({ headers, status: answer.status, closed: answer.closed }).toEqual({ headers, status: 400, closed: true })
    }
    for (const protocol of ['h2c', 'WebSocket', 'websocket, h2c']) {
      const answer = await upgrade(url, { 'x-dogu-token': 'a-console-token-1234' }, protocol)
      expect({ protocol, status: answer.status, closed: answer.closed }).toEqual({ protocol, status: 400, closed: true })
    }
  })

  it('drops the connection even when the client keeps sending after its upgrade request', async () => {
    app = await startConsoleApp()
    const { hostname, port } = new URL(app.base)
    const received = await new Promise<{ text: string; closed: boolean }>((resolve, reject) => {
      const socket = connect(Number(port), hostname)
      let text = ''
      const timer = setTimeout(() => {
        socket.destroy()
        resolve({ text, closed: false })
      }, 10_000)
      socket.setEncoding('utf8').on('data', (chunk) => { text += chunk })
      socket.on('error', (error) => {
        // The server may reset the connection while the client is still writing.
        if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET' && (error as NodeJS.ErrnoException).code !== 'EPIPE') reject(error)
      })
      socket.on('close', () => {
        clearTimeout(timer)
        resolve({ text, closed: true })
      })
      socket.write([
        'GET /dogu HTTP/1.1',
        `Host: ${hostname}:${port}`,
        'Connection: Upgrade',
        'Upgrade: websocket',
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
        'Sec-WebSocket-Version: 13',
        '',
        '',
      ].join('\r\n'))
      // What a client would send as its first frame: nobody reads it.
      socket.write(Buffer.alloc(64 * 1024, 0x81), () => {})
    })
    expect(received.closed).toBe(true)
    expect(received.text).not.toMatch(/^HTTP\/1\.1 101/)
  })

  it('keeps answering plain HTTP after refusing an upgrade', async () => {
    app = await startConsoleApp()
    expect((await upgrade(`${app.base}/api/tools.list`)).status).toBe(400)
    const { status, body } = await app.send('tools.list')
    expect(status).toBe(200)
    expect(body.map((tool: any) => tool.name)).toContain('echo')
  })
})
