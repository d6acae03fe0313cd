import { execFile, execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, statSync, writeFileSync, readFileSync, existsSync } from 'node:fs'
import { createServer as createHttpServer, request, type IncomingHttpHeaders } from 'node:http'
import { connect, createServer, type Server, type Socket } from 'node:net'
import { networkInterfaces, tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { freePort } from '../../../test-support/free-port'
import { within } from '../../../test-support/within'
import { checkAllowlist, hostAllowed, ownAddresses, refusedAddress, startNetworkProxy, type NetworkProxy, type NetworkProxyOptions } from '../src/network-proxy'
import { ShellError } from '../src/shell-error'

describe('hostAllowed', () => {
  const allow = ['api.example.com', '*.example.org', '192.0.2.7', '2001:db8::1']
  it.each([
    ['api.example.com', true],
    ['API.Example.COM', true],
    ['api.example.com.', true],
    ['other.example.com', false],
    ['example.com', false],
    ['api.example.com.evil.net', false],
    ['a.example.org', true],
    ['b.a.example.org', true],
    ['A.EXAMPLE.ORG.', true],
    ['example.org', false],
    ['evilexample.org', false],
    ['example.org.evil.net', false],
    ['192.0.2.7', true],
    ['192.0.2.70', false],
    ['::ffff:192.0.2.7', false],
    ['2001:db8::1', true],
    ['[2001:db8::1]', true],
    ['2001:db8:0::0001', true],
    ['2001:db8::2', false],
    ['', false],
  ])('%s → %s', (host, expected) => {
    expect(hostAllowed(host, allow)).toBe(expected)
  })

  it('a wildcard never matches an IP literal, and a pattern in another case or with a dot still matches', () => {
    expect(hostAllowed('1.2.3.4', ['*.3.4'])).toBe(false)
    expect(hostAllowed('api.example.com', ['API.EXAMPLE.COM.'])).toBe(true)
    expect(hostAllowed('api.example.com', [])).toBe(false)
  })
})

describe('checkAllowlist', () => {
  it('accepts names, wildcards and IP literals', () => {
    expect(checkAllowlist(['api.example.com', '*.example.org', 'Example.NET.', '10.0.0.5', '::1', '[2001:db8::1]', 'my_host.internal'])).toBeUndefined()
    expect(checkAllowlist([])).toBeUndefined()
  })

  it.each([
    [['ok.example', '*foo'], 'entry 2 "*foo" is not a host pattern: a wildcard is "*." in front of a domain'],
    [['a b'], 'entry 1 "a b" is not a host pattern: "a b" is not a DNS label'],
    [['http://x'], 'entry 1 "http://x" is not a host pattern: give the host alone, without a scheme, port or path'],
    [['example.com:443'], 'without a scheme, port or path'],
    [[''], 'entry 1 "" is not a host pattern: it is empty'],
    [['ok.example', 42], 'entry 2 is not a string but number'],
    [[null], 'entry 1 is not a string but null'],
    [['*'], 'a wildcard is "*."'],
    [['a.*.example.org'], 'a wildcard is "*."'],
    [['a..example.org'], 'it has an empty label'],
    [['-bad.example.org'], '"-bad" is not a DNS label'],
    [['010.0.0.1'], 'it looks like an IP address but is not one'],
    [['*.1.2.3'], 'it looks like an IP address but is not one'],
  ])('rejects %j', (allow, message) => {
    expect(checkAllowlist(allow)).toContain(message)
  })

  it('rejects something that is not a list', () => {
    expect(checkAllowlist('api.example.com')).toBe('the network allowlist must be a list of host patterns')
    expect(checkAllowlist(undefined)).toBe('the network allowlist must be a list of host patterns')
  })
})

/**
 * A non-loopback address of this machine. The proxy refuses the machine's own addresses, so
 * the proxies of these tests see an interface list without it: to them the targets that
 * listen there are another host (the refusal itself is tested with the real list).
 */
function machineAddress(): string {
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) if (entry.family === 'IPv4' && !entry.internal) return entry.address
  }
  throw new Error('these tests need a non-loopback IPv4 interface address to run target servers on; this machine has none')
}

const address = machineAddress()

/** The machine's interfaces without `address`: what a proxy on another host would see. */
function interfacesWithout(removed: string) {
  return () => Object.fromEntries(Object.entries(networkInterfaces()).map(([name, entries]) => [name, (entries ?? []).filter((entry) => entry.address !== removed)]))
}

let directory: string
let cleanups: (() => unknown)[]

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'dogu-proxy-'))
  cleanups = []
})

afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
  rmSync(directory, { recursive: true, force: true })
})

async function startProxy(options: Partial<NetworkProxyOptions> = {}): Promise<NetworkProxy> {
  const proxy = await startNetworkProxy({
    socketPath: join(directory, 'proxy.sock'),
    allow: ['api.example.com', '*.example.org', 'loop.example.com'],
    lookup: async (host) => {
      if (host === 'api.example.com' || host.endsWith('.example.org')) return [address]
      if (host === 'loop.example.com') return ['127.0.0.1']
      throw new Error(`getaddrinfo ENOTFOUND ${host}`)
    },
    interfaces: interfacesWithout(address),
    ...options,
  })
  cleanups.push(() => proxy.close())
  return proxy
}

interface Target {
  port: number
  /** Connections it accepted. */
  sockets: Socket[]
}

/** A TCP echo server on `host`, which records every connection. */
async function echoServer(host = address): Promise<Target> {
  const sockets: Socket[] = []
  const server = createServer((socket) => {
    sockets.push(socket)
    socket.on('error', () => {})
    socket.pipe(socket)
  })
  const port = await listen(server, host)
  cleanups.push(() => closeServer(server, sockets))
  return { port, sockets }
}

interface Received {
  url: string
  method: string
  headers: IncomingHttpHeaders
  body: string
}

/** An HTTP server on `host` that answers 201 with a header and names what it received. */
async function httpTarget(host = address) {
  const received: Received[] = []
  const sockets: Socket[] = []
  const server = createHttpServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      received.push({ url: req.url!, method: req.method!, headers: req.headers, body })
      res.writeHead(201, { 'x-target': 'yes', 'content-type': 'text/plain' })
      res.end(`hello from the target: ${req.method} ${req.url} ${body}`)
    })
  })
  server.on('connection', (socket) => sockets.push(socket))
  const port = await listen(server, host)
  cleanups.push(() => closeServer(server, sockets))
  return { port, received, sockets }
}

function listen(server: Server, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, host, () => resolve((server.address() as { port: number }).port))
  })
}

function closeServer(server: Server, sockets: Socket[]): Promise<void> {
  for (const socket of sockets) socket.destroy()
  return new Promise((resolve) => server.close(() => resolve()))
}

/** A raw client on the proxy's socket, collecting what it reads. */
function rawClient(socketPath: string) {
  const socket = connect(socketPath)
  socket.on('error', () => {})
  let text = ''
  let closed = false
  const listeners = new Set<() => void>()
  socket.setEncoding('latin1')
  socket.on('data', (chunk: string) => {
    text += chunk
    for (const listener of listeners) listener()
  })
  socket.on('close', () => {
    closed = true
    for (const listener of listeners) listener()
  })
  return {
    socket,
    get text() {
      return text
    },
    /** Resolves with everything read once `done(text)` holds; rejects if the socket closes first. */
    until(done: (text: string) => boolean, what: string): Promise<string> {
      return within(new Promise<string>((resolve, reject) => {
        const check = () => {
          if (done(text)) resolve(text)
          else if (closed) reject(new Error(`the proxy closed the connection before ${what}; read ${JSON.stringify(text)}`))
          else return
          listeners.delete(check)
        }
        listeners.add(check)
        check()
      }), what)
    },
    closed: within(new Promise<void>((resolve) => (closed ? resolve() : socket.once('close', () => resolve()))), 'the connection closing'),
  }
}

const headersEnd = (text: string) => text.includes('\r\n\r\n')

function connectRequest(authority: string): string {
  return `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`
}

/** A raw client that has sent `CONNECT target` (and `extra` right behind it) to the proxy. */
function sendConnect(proxy: { socketPath: string }, target: string, extra = '') {
  const client = rawClient(proxy.socketPath)
  client.socket.write(connectRequest(target) + extra)
  return client
}

/** Sends a request through the proxy (as curl does) and returns the status, headers and body. */
function proxyRequest(socketPath: string, path: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  return within(new Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = request({ socketPath, path, method: options.method ?? 'GET', headers: options.headers, agent: false }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => (body += chunk))
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(options.body)
  }), `the answer to ${path}`)
}

describe('startNetworkProxy: CONNECT', () => {
  it('tunnels bytes both ways to an allowed host, including bytes sent with the request', async () => {
    const target = await echoServer()
    const proxy = await startProxy()
    const client = sendConnect(proxy, `api.example.com:${target.port}`, 'early ')
    const established = await client.until((text) => text.includes('early '), 'the early bytes echoing')
    expect(established.startsWith('HTTP/1.1 200 Connection Established\r\n\r\n')).toBe(true)
    client.socket.write('later')
    await client.until((text) => text.endsWith('early later'), 'the later bytes echoing')
    expect(target.sockets).toHaveLength(1)
    expect(target.sockets[0]!.localAddress).toBe(address)
    expect(proxy.refused).toEqual([])
  })

  it('reaches a subdomain of a wildcard entry on any port', async () => {
    const target = await echoServer()
    const proxy = await startProxy()
    const client = sendConnect(proxy, `Deep.Sub.Example.ORG:${target.port}`)
    await client.until(headersEnd, 'the tunnel')
    client.socket.write('ping')
    await client.until((text) => text.endsWith('\r\n\r\nping'), 'the echo')
  })

  it('answers 403 to a host not on the list, closes, and never connects to it', async () => {
    const target = await echoServer()
    const proxy = await startProxy({ lookup: async () => [address] })
    const client = sendConnect(proxy, `example.org:${target.port}`)
    await client.closed
    expect(client.text).toMatch(/^HTTP\/1\.1 403 /)
    expect(client.text.endsWith('\r\n\r\ndogu sandbox: host example.org is not in the network allowlist\n')).toBe(true)
    expect(target.sockets).toHaveLength(0)
    expect(proxy.refused).toEqual([{ host: 'example.org', reason: 'not in the network allowlist' }])
  })

  it('refuses an allowlisted name that resolves to loopback; the loopback server sees nothing', async () => {
    const target = await echoServer('127.0.0.1')
    const proxy = await startProxy()
    const client = sendConnect(proxy, `loop.example.com:${target.port}`)
    await client.closed
    expect(client.text).toMatch(/^HTTP\/1\.1 403 /)
    expect(client.text).toContain('dogu sandbox: host loop.example.com resolves to 127.0.0.1')
    expect(target.sockets).toHaveLength(0)
    expect(proxy.refused).toEqual([{ host: 'loop.example.com', reason: "resolves to 127.0.0.1, an address on the bot's own machine" }])
  })

  it.each([
    [['127.0.0.1']], [['127.8.9.10']], [['::1']], [['0.0.0.0']], [['::']], [['169.254.169.254']],
    [['fe80::1']], [['fe80::1%eth0']], [['::ffff:127.0.0.1']], [['::ffff:7f00:1']], [['::ffff:169.254.169.254']],
    [[address, '127.0.0.1']],
  ])('refuses a name when any address it resolves to is local: %j', async (addresses) => {
    const target = await echoServer()
    const proxy = await startProxy({ lookup: async () => addresses })
    const client = sendConnect(proxy, `api.example.com:${target.port}`)
    await client.closed
    expect(client.text).toMatch(/^HTTP\/1\.1 403 /)
    expect(client.text).toContain("an address on the bot's own machine")
    expect(target.sockets).toHaveLength(0)
  })

  it('does not refuse private addresses: owners allowlist internal APIs', async () => {
    const target = await echoServer()
    const proxy = await startProxy({ lookup: async () => [address, '10.1.2.3', '192.168.1.1', '172.16.0.1', 'fd00::1'] })
    const client = sendConnect(proxy, `api.example.com:${target.port}`, 'ping')
    await client.until((text) => text.endsWith('\r\n\r\nping'), 'the echo')
    expect(proxy.refused).toEqual([])
  })

  it('refuses localhost and loopback literals with the real resolver', async () => {
    const target = await echoServer('127.0.0.1')
    const proxy = await startProxy({ allow: ['localhost', '127.0.0.1'], lookup: undefined })
    for (const host of ['localhost', '127.0.0.1']) {
      const client = sendConnect(proxy, `${host}:${target.port}`)
      await client.closed
      expect(client.text).toMatch(/^HTTP\/1\.1 403 /)
      expect(client.text).toMatch(/resolves to (127\.0\.0\.1|::1)/)
    }
    expect(target.sockets).toHaveLength(0)
    expect(proxy.refused.map((entry) => entry.host)).toEqual(['localhost', '127.0.0.1'])
  })

  it('answers 502 when an allowed name does not resolve, and does not count it as refused', async () => {
    const proxy = await startProxy({ lookup: async (host) => { throw new Error(`getaddrinfo ENOTFOUND ${host}`) } })
    const client = sendConnect(proxy, 'api.example.com:443')
    await client.closed
    expect(client.text).toMatch(/^HTTP\/1\.1 502 /)
    expect(client.text).toContain('dogu sandbox: could not resolve api.example.com: getaddrinfo ENOTFOUND api.example.com')
    expect(proxy.refused).toEqual([])
  })

  it('answers 502 when the allowed host refuses the connection', async () => {
    const server = createServer()
    const closedPort = await listen(server, address)
    await new Promise((resolve) => server.close(resolve))
    const proxy = await startProxy()
    const client = sendConnect(proxy, `api.example.com:${closedPort}`)
    await client.closed
    expect(client.text).toMatch(/^HTTP\/1\.1 502 /)
    expect(client.text).toContain('ECONNREFUSED')
    const plain = await proxyRequest(proxy.socketPath, `http://api.example.com:${closedPort}/`)
    expect(plain.status).toBe(502)
    expect(plain.body).toContain('ECONNREFUSED')
  })

  it('answers 400 to a CONNECT without a port', async () => {
    const proxy = await startProxy()
    const client = rawClient(proxy.socketPath)
    client.socket.write('CONNECT api.example.com HTTP/1.1\r\nHost: api.example.com\r\n\r\n')
    await client.closed
    expect(client.text).toMatch(/^HTTP\/1\.1 400 /)
  })

  it('keeps the 50 newest refusals', async () => {
    const proxy = await startProxy()
    for (let index = 1; index <= 55; index++) {
      const client = sendConnect(proxy, `host${index}.example.com:443`)
      await client.closed
    }
    expect(proxy.refused).toHaveLength(50)
    expect(proxy.refused[0]!.host).toBe('host6.example.com')
    expect(proxy.refused[49]!.host).toBe('host55.example.com')
  })
})

describe('the machine\'s own addresses', () => {
  it('refuses every address of this machine\'s interfaces, both families, as they are now', () => {
    const own = ownAddresses(networkInterfaces())
    const listed = Object.values(networkInterfaces()).flat().map((entry) => entry!.address)
    expect(listed.length).toBeGreaterThan(1)
    for (const found of listed) expect(refusedAddress(found, own), found).toBeDefined()
    expect(refusedAddress(address, own)).toBe('an address of one of the bot\'s own machine\'s interfaces')
    expect(refusedAddress(`::ffff:${address}`, own)).toBe('an address of one of the bot\'s own machine\'s interfaces')
  })

  it('refuses broadcast (limited and each interface network\'s) and multicast, and lets another host through', () => {
    const own = ownAddresses({ eth0: [{ address: '10.1.2.3', netmask: '255.255.254.0', family: 'IPv4', mac: '', internal: false, cidr: '10.1.2.3/23' }] })
    expect(refusedAddress('10.1.3.255', own)).toBe('an address of one of the bot\'s own machine\'s interfaces')
    expect(refusedAddress('255.255.255.255', own)).toBe('a broadcast or multicast address')
    expect(refusedAddress('224.0.0.251', own)).toBe('a broadcast or multicast address')
    expect(refusedAddress('239.1.2.3', own)).toBe('a broadcast or multicast address')
    expect(refusedAddress('ff02::1', own)).toBe('a broadcast or multicast address')
    expect(refusedAddress('10.1.2.4', own)).toBeUndefined()
    expect(refusedAddress('2001:db8::5', own)).toBeUndefined()
  })

  // The review's attack: an allowlist naming the host's own eth0 address reached a service
  // bound to 0.0.0.0. The proxy here sees the real interface list.
  it.each([
    ['the address itself', () => address, async () => [address]],
    ['a name that resolves to it', () => 'api.example.com', async () => [address]],
    ['a name with another address first', () => 'api.example.com', async () => ['192.0.2.200', address]],
  ])('refuses a CONNECT to %s; a service on 0.0.0.0 sees nothing', async (_, target, lookup) => {
    const service = await echoServer('0.0.0.0')
    const proxy = await startProxy({ allow: [address, 'api.example.com'], lookup, interfaces: networkInterfaces })
    const client = sendConnect(proxy, `${target()}:${service.port}`)
    await client.closed
    expect(client.text).toMatch(/^HTTP\/1.1 403 /)
    expect(client.text).toContain(`resolves to ${address}, an address of one of the bot's own machine's interfaces`)
    expect(service.sockets).toHaveLength(0)
    expect(proxy.refused.at(-1)?.reason).toContain('own machine\'s interfaces')
  })

  it('refuses a plain request to its own IPv6 address; a service on :: sees nothing', async () => {
    const v6 = Object.values(networkInterfaces()).flat().find((entry) => entry!.family === 'IPv6' && !entry!.internal && !entry!.address.startsWith('fe80'))?.address
    // Every interface address is refused (the first test); this one needs a global IPv6 address.
    const own = v6 ?? address
    const service = await httpTarget(v6 ? '::' : '0.0.0.0')
    const proxy = await startProxy({ allow: [own], interfaces: networkInterfaces })
    const answer = await proxyRequest(proxy.socketPath, `http://${v6 ? `[${own}]` : own}:${service.port}/`)
    expect(answer.status).toBe(403)
    expect(service.received).toHaveLength(0)
  })
})

describe('startNetworkProxy: plain HTTP', () => {
  it('forwards an absolute-URI request with its Host, without proxy headers, and streams the answer back', async () => {
    const target = await httpTarget()
    const proxy = await startProxy()
    const answer = await proxyRequest(proxy.socketPath, `http://api.example.com:${target.port}/x?y=1`, {
      method: 'POST',
      headers: {
        host: `api.example.com:${target.port}`,
        'proxy-authorization': 'Basic c2VjcmV0',
        'proxy-connection': 'keep-alive',
        connection: 'x-hop',
        'x-hop': 'dropped',
        'x-custom': 'kept',
      },
      body: 'the body',
    })
    expect(answer).toMatchObject({ status: 201, headers: { 'x-target': 'yes' }, body: 'hello from the target: POST /x?y=1 the body' })
    expect(target.received).toHaveLength(1)
    const { headers } = target.received[0]!
    expect(headers.host).toBe(`api.example.com:${target.port}`)
    expect(headers['x-custom']).toBe('kept')
    expect(headers).not.toHaveProperty('proxy-authorization')
    expect(headers).not.toHaveProperty('proxy-connection')
    expect(headers).not.toHaveProperty('x-hop')
  })

  it('sets Host from the URL even when the client sends another', async () => {
    const target = await httpTarget()
    const proxy = await startProxy()
    await proxyRequest(proxy.socketPath, `http://a.example.org:${target.port}/`, { headers: { host: 'evil.test' } })
    expect(target.received[0]!.headers.host).toBe(`a.example.org:${target.port}`)
  })

  it('answers 403 to a host not on the list and sends nothing on', async () => {
    const target = await httpTarget()
    const proxy = await startProxy({ lookup: async () => [address] })
    const answer = await proxyRequest(proxy.socketPath, 'http://evil.test/')
    expect(answer).toMatchObject({ status: 403, body: 'dogu sandbox: host evil.test is not in the network allowlist\n' })
    const loop = await proxyRequest(proxy.socketPath, `http://127.0.0.1:${target.port}/`)
    expect(loop.status).toBe(403)
    expect(target.received).toHaveLength(0)
    expect(target.sockets).toHaveLength(0)
    expect(proxy.refused.map((entry) => entry.host)).toEqual(['evil.test', '127.0.0.1'])
  })

  it('refuses an allowlisted name resolving to loopback; the loopback server sees nothing', async () => {
    const target = await httpTarget('127.0.0.1')
    const proxy = await startProxy()
    const answer = await proxyRequest(proxy.socketPath, `http://loop.example.com:${target.port}/`)
    expect(answer.status).toBe(403)
    expect(answer.body).toContain('resolves to 127.0.0.1')
    expect(target.sockets).toHaveLength(0)
  })

  it('answers 400 to a path without a host and to other schemes', async () => {
    const target = await httpTarget()
    const proxy = await startProxy()
    expect((await proxyRequest(proxy.socketPath, '/x')).status).toBe(400)
    expect((await proxyRequest(proxy.socketPath, `https://api.example.com:${target.port}/`)).status).toBe(400)
    expect((await proxyRequest(proxy.socketPath, `ftp://api.example.com:${target.port}/`)).status).toBe(400)
    expect(target.sockets).toHaveLength(0)
  })
})

describe('startNetworkProxy: lifetime', () => {
  it('close() with an open tunnel resolves and closes both sides; a second close() resolves too', async () => {
    const target = await echoServer()
    const proxy = await startProxy()
    const client = sendConnect(proxy, `api.example.com:${target.port}`, 'ping')
    await client.until((text) => text.endsWith('ping'), 'the echo')
    const targetSide = target.sockets[0]!
    const targetClosed = new Promise((resolve) => targetSide.once('close', resolve))
    await within(proxy.close(), 'close()')
    await client.closed
    await within(targetClosed, 'the target side closing')
    await within(proxy.close(), 'the second close()')
    expect(existsSync(proxy.socketPath)).toBe(false)
  })

  it('close() ends a plain request whose answer is still coming', async () => {
    const sockets: Socket[] = []
    const server = createHttpServer((_req, res) => res.write('partial'))
    server.on('connection', (socket) => sockets.push(socket))
    const port = await listen(server, address)
    cleanups.push(() => closeServer(server, sockets))
    const proxy = await startProxy()
    const client = rawClient(proxy.socketPath)
    client.socket.write(`GET http://api.example.com:${port}/ HTTP/1.1\r\nHost: api.example.com:${port}\r\n\r\n`)
    await client.until((text) => text.includes('partial'), 'the partial answer')
    const targetClosed = new Promise((resolve) => sockets[0]!.once('close', resolve))
    await within(proxy.close(), 'close()')
    await client.closed
    await within(targetClosed, 'the target side closing')
  })

  it('an empty probe connection is harmless', async () => {
    const said = vi.spyOn(console, 'error')
    const warned = vi.spyOn(console, 'warn')
    cleanups.push(() => vi.restoreAllMocks())
    const target = await echoServer()
    const proxy = await startProxy()
    const quiet = rawClient(proxy.socketPath)
    await new Promise((resolve) => quiet.socket.once('connect', resolve))
    quiet.socket.end()
    await quiet.closed
    const reset = rawClient(proxy.socketPath)
    await new Promise((resolve) => reset.socket.once('connect', resolve))
    reset.socket.destroy()
    await reset.closed
    expect(quiet.text).toBe('')
    expect(said).not.toHaveBeenCalled()
    expect(warned).not.toHaveBeenCalled()
    const client = sendConnect(proxy, `api.example.com:${target.port}`, 'still works')
    await client.until((text) => text.endsWith('still works'), 'the echo after the probes')
    expect(proxy.refused).toEqual([])
  })

  it('listens owner-only, replacing a stale socket file but nothing else', async () => {
    const socketPath = join(directory, 'stale.sock')
    // A process that exits without closing its server leaves the socket file behind.
    execFileSync(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(socketPath)}, () => process.exit(0))`])
    expect(statSync(socketPath).isSocket()).toBe(true)
    const proxy = await startProxy({ socketPath })
    expect(statSync(socketPath).mode & 0o777).toBe(0o600)
    await proxy.close()
    const filePath = join(directory, 'file.sock')
    writeFileSync(filePath, 'not a socket')
    await expect(startProxy({ socketPath: filePath })).rejects.toThrow(/EADDRINUSE/)
    expect(readFileSync(filePath, 'utf8')).toBe('not a socket')
  })

  it('refuses to start with a bad allowlist', async () => {
    const error = await startProxy({ allow: ['api.example.com', '*foo'] }).catch((error) => error)
    expect(ShellError.is(error, 'INVALID_OPTIONS')).toBe(true)
    expect(error.message).toContain('entry 2 "*foo" is not a host pattern')
    expect(existsSync(join(directory, 'proxy.sock'))).toBe(false)
  })
})

const run = promisify(execFile)
// The path a sandboxed command takes: curl → HTTP_PROXY (socat on 127.0.0.1) → the Unix socket.
describe('startNetworkProxy: through socat with curl', () => {
  async function socatFor(proxy: NetworkProxy): Promise<number> {
    const port = await freePort()
    const child = spawn('socat', [`TCP-LISTEN:${port},bind=127.0.0.1,reuseaddr,fork`, `UNIX-CONNECT:${proxy.socketPath}`], { stdio: 'ignore' })
    const exited = new Promise((resolve) => child.once('exit', resolve))
    cleanups.push(() => {
      child.kill('SIGKILL')
      return exited
    })
    // Ready when it accepts a connection (which reaches the proxy as an empty probe).
    await within((async () => {
      for (;;) {
        const ok = await new Promise<boolean>((resolve) => {
          const probe = connect(port, '127.0.0.1', () => {
            probe.end()
            resolve(true)
          })
          probe.once('error', () => resolve(false))
        })
        if (ok) return
        await new Promise((resolve) => setImmediate(resolve))
      }
    })(), 'socat listening')
    return port
  }

  const curl = (args: string[]) => run('curl', ['-sS', ...args], { env: { PATH: process.env.PATH } })

  it('forwards plain HTTP and CONNECT tunnels, and refuses other hosts', async () => {
    const target = await httpTarget()
    const proxy = await startProxy()
    const port = await socatFor(proxy)
    const proxyUrl = `http://127.0.0.1:${port}`
    const plain = await curl(['-x', proxyUrl, `http://api.example.com:${target.port}/plain`])
    expect(plain.stdout).toBe('hello from the target: GET /plain ')
    const tunnel = await curl(['-p', '-x', proxyUrl, `http://b.example.org:${target.port}/tunnel`])
    expect(tunnel.stdout).toBe('hello from the target: GET /tunnel ')
    expect(target.received.map((entry) => entry.headers.host)).toEqual([`api.example.com:${target.port}`, `b.example.org:${target.port}`])
    const refused = await curl(['-x', proxyUrl, `http://evil.test:${target.port}/`])
    expect(refused.stdout).toBe('dogu sandbox: host evil.test is not in the network allowlist\n')
    const refusedTunnel = await curl(['-p', '-x', proxyUrl, `http://evil.test:${target.port}/`]).catch((error) => error)
    expect(refusedTunnel.stderr).toContain('403')
    expect(target.received).toHaveLength(2)
    expect(proxy.refused.map((entry) => entry.host)).toEqual(['evil.test', 'evil.test'])
  })
})
