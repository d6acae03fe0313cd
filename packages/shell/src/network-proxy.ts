import { chmod, lstat, unlink } from 'node:fs/promises'
import { lookup as dnsLookup } from 'node:dns/promises'
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import { BlockList, connect, isIP, type Socket } from 'node:net'
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os'
import { pipeline } from 'node:stream'
import { ShellError } from './shell-error'

/**
 * The proxy the sandboxed `bash` tool reaches the network through. The sandbox has its own
 * network namespace with no route out; a `socat` inside forwards 127.0.0.1:3128 to this
 * proxy's Unix socket, and `HTTP_PROXY`/`HTTPS_PROXY` point there. So this is the only way
 * out, and it enforces the owner's host allowlist on every request.
 */

export interface NetworkProxyOptions {
  /** Where to listen: a Unix socket path (the caller picks a private 0700 directory). */
  socketPath: string
  /**
   * Host patterns: `api.example.com` exactly; `*.example.org` any subdomain (a.example.org,
   * b.a.example.org) but not example.org itself. Case-insensitive, a trailing dot ignored.
   * An IP literal matches only itself. Checked with {@link checkAllowlist}.
   */
  allow: readonly string[]
  /** @internal tests: resolve a name to addresses instead of DNS */
  lookup?: (host: string) => Promise<string[]>
  /** @internal tests: the machine's interfaces instead of `os.networkInterfaces()`, read at each connect */
  interfaces?: () => NodeJS.Dict<NetworkInterfaceInfo[]>
}

export interface NetworkProxy {
  readonly socketPath: string
  /** Requests refused so far, newest last (host and why), at most 50 kept. */
  readonly refused: readonly { host: string; reason: string }[]
  /** Stops listening and destroys every open connection (both sides); resolves when closed. Safe to call twice. */
  close(): Promise<void>
}

const REFUSED_KEPT = 50
/** Tunnels and forwarded requests idle this long are closed, so nothing waits forever. */
const IDLE_TIMEOUT = 120_000
/** Hosts are shown to the owner; a hostile command should not fill the log with one. */
const HOST_SHOWN = 255

const HOP_BY_HOP = new Set([
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection',
  'te', 'trailer', 'transfer-encoding', 'upgrade',
])

// Addresses that reach the bot's own machine rather than another host: loopback (its
// console, its database), unspecified (Linux connects 0.0.0.0 to the local host) and
// link-local (cloud metadata services at 169.254.169.254). BlockList also matches the
// IPv4-mapped IPv6 forms (::ffff:127.0.0.1) against the IPv4 rules. Private ranges are
// not here on purpose: owners allowlist internal APIs.
const LOCAL = new BlockList()
LOCAL.addSubnet('127.0.0.0', 8, 'ipv4')
LOCAL.addSubnet('0.0.0.0', 8, 'ipv4')
LOCAL.addSubnet('169.254.0.0', 16, 'ipv4')
LOCAL.addAddress('::1', 'ipv6')
LOCAL.addAddress('::', 'ipv6')
LOCAL.addSubnet('fe80::', 10, 'ipv6')

// Broadcast and multicast reach every host of a network at once, this one included.
const GROUP = new BlockList()
GROUP.addAddress('255.255.255.255', 'ipv4')
GROUP.addSubnet('224.0.0.0', 4, 'ipv4')
GROUP.addSubnet('ff00::', 8, 'ipv6')

const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/

/**
 * Whether `host` (as a client names it: any case, maybe a trailing dot, an IPv6 literal
 * maybe in brackets) matches one of the `allow` patterns.
 */
export function hostAllowed(host: string, allow: readonly string[]): boolean {
  const wanted = normalizeHost(host)
  if (!wanted) return false
  const ip = isIP(wanted) !== 0
  return allow.some((entry) => {
    const pattern = normalizeHost(entry)
    if (!pattern) return false
    if (ip || isIP(pattern)) return ip && isIP(pattern) !== 0 && canonicalIp(pattern) === canonicalIp(wanted)
    if (pattern.startsWith('*.')) {
      // The dot is part of the suffix: *.example.org must not match evilexample.org.
      const suffix = pattern.slice(1)
      return wanted.length > suffix.length && wanted.endsWith(suffix)
    }
    return wanted === pattern
  })
}

/** A problem with the configured allowlist, as a sentence naming the entry (counted from 1), or `undefined`. */
export function checkAllowlist(allow: unknown): string | undefined {
  if (!Array.isArray(allow)) return 'the network allowlist must be a list of host patterns'
  for (const [index, entry] of allow.entries()) {
    const name = `entry ${index + 1}`
    if (typeof entry !== 'string') return `${name} is not a string but ${entry === null ? 'null' : typeof entry}`
    const problem = patternProblem(entry)
    if (problem) return `${name} ${JSON.stringify(entry)} is not a host pattern: ${problem}`
  }
  return undefined
}

function patternProblem(entry: string): string | undefined {
  if (entry === '') return 'it is empty'
  if (/[/:@]/.test(entry) && !isIP(stripBrackets(entry))) return 'give the host alone, without a scheme, port or path'
  const host = normalizeHost(entry)
  if (isIP(host)) return undefined
  const wildcard = host.startsWith('*.')
  const name = wildcard ? host.slice(2) : host
  if (host.includes('*') && !(wildcard && !name.includes('*'))) {
    return 'a wildcard is "*." in front of a domain, as in *.example.org'
  }
  if (name.length > 253) return 'it is longer than 253 characters'
  const labels = name.split('.')
  const bad = labels.find((label) => !LABEL.test(label))
  if (bad !== undefined) {
    return bad === '' ? 'it has an empty label' : `${JSON.stringify(bad)} is not a DNS label (letters, digits, "-")`
  }
  // A numeric last label is not a domain; resolvers read such names as IPv4 shorthand
  // (010.1 is 8.0.0.1), so only a dotted-quad IP literal may look like that.
  if (/^[0-9]+$/.test(labels[labels.length - 1]!)) return 'it looks like an IP address but is not one'
  return undefined
}

/**
 * Starts the proxy on `options.socketPath` (a stale socket file there is removed). Any
 * port of an allowlisted host may be reached: the allowlist names hosts, and owners
 * allowlist internal services on their own ports.
 */
export async function startNetworkProxy(options: NetworkProxyOptions): Promise<NetworkProxy> {
  const problem = checkAllowlist(options.allow)
  if (problem) throw new ShellError('INVALID_OPTIONS', problem)
  const allow = [...options.allow]
  const resolve = options.lookup ?? resolveName
  const interfaces = options.interfaces ?? networkInterfaces
  const refused: { host: string; reason: string }[] = []
  // Every socket on either side, so close() can end tunnels the HTTP server no longer tracks.
  const sockets = new Set<Socket>()
  const track = (socket: Socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  }

  const refuse = (host: string, reason: string) => {
    refused.push({ host: host.slice(0, HOST_SHOWN), reason })
    if (refused.length > REFUSED_KEPT) refused.splice(0, refused.length - REFUSED_KEPT)
  }

  /** The address to connect to, or the status and body to answer with. */
  async function destination(host: string): Promise<{ address: string } | { status: number; message: string }> {
    const shown = host.slice(0, HOST_SHOWN)
    if (!hostAllowed(host, allow)) {
      refuse(host, 'not in the network allowlist')
      return { status: 403, message: `dogu sandbox: host ${shown} is not in the network allowlist` }
    }
    const name = normalizeHost(host)
    let addresses: string[]
    try {
      addresses = isIP(name) ? [name] : await resolve(name)
    } catch (error) {
      return { status: 502, message: `dogu sandbox: could not resolve ${shown}: ${(error as Error).message}` }
    }
    if (addresses.length === 0) return { status: 502, message: `dogu sandbox: ${shown} has no address` }
    // Every address is checked, not only the one used: a name that can resolve to a local
    // address is refused outright rather than depending on which answer comes first. The
    // interfaces are read now, not at start: addresses come and go (DHCP, a VPN, docker0).
    const own = ownAddresses(interfaces())
    for (const found of addresses) {
      const why = refusedAddress(found, own)
      if (!why) continue
      const reason = `resolves to ${found}, ${why}`
      refuse(host, reason)
      return { status: 403, message: `dogu sandbox: host ${shown} ${reason}` }
    }
    // We connect to the address we checked, so a second lookup cannot answer differently.
    return { address: addresses[0]! }
  }

  let closing: Promise<void> | undefined
  const server = createServer()
  // Plain requests share the idle limit; on timeout the server destroys the socket.
  server.setTimeout(IDLE_TIMEOUT)
  server.on('connection', track)

  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    // The HTTP server stops handling this socket's errors once it is a tunnel.
    client.on('error', () => client.destroy())
    client.setTimeout(IDLE_TIMEOUT, () => client.destroy())
    const target = parseAuthority(req.url ?? '')
    if (!target) return answer(client, 400, 'dogu sandbox: CONNECT needs host:port')
    void destination(target.host).then((found) => {
      if (client.destroyed || closing) return client.destroy()
      if ('status' in found) return answer(client, found.status, found.message)
      const upstream = connect({ host: found.address, port: target.port })
      track(upstream)
      upstream.setTimeout(IDLE_TIMEOUT, () => upstream.destroy())
      let established = false
      upstream.once('connect', () => {
        established = true
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
        if (head.length > 0) upstream.write(head)
        client.pipe(upstream)
        upstream.pipe(client)
      })
      upstream.on('error', (error) => {
        if (!established && !client.destroyed) answer(client, 502, `dogu sandbox: could not connect to ${target.host}: ${error.message}`)
        else client.destroy()
      })
      // When one side closes, the other goes too: at once if it was cut off, after what is
      // queued for it is written if the closed side ended normally (pipe() ended it).
      const closeWith = (from: Socket, to: Socket) => from.once('close', () => {
        if (!to.writableEnded || to.writableFinished) to.destroy()
        else to.once('finish', () => to.destroy())
      })
      closeWith(client, upstream)
      upstream.once('connect', () => closeWith(upstream, client))
    })
  })

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    let url: URL | undefined
    try {
      url = new URL(req.url ?? '')
    } catch {}
    if (!url || url.protocol !== 'http:') {
      return reply(res, 400, 'dogu sandbox: the proxy takes absolute http:// URIs (use CONNECT for https)')
    }
    const target = url
    void destination(target.hostname).then((found) => {
      if (res.destroyed || closing) return res.destroy()
      if ('status' in found) return reply(res, found.status, found.message)
      const upstream = request({
        host: found.address,
        port: Number(target.port || 80),
        method: req.method,
        path: target.pathname + target.search,
        headers: { ...forwardHeaders(req.headers), host: target.host },
        setHost: false,
        // One connection per request, so close() finds it and nothing is pooled after.
        agent: false,
      })
      upstream.on('socket', track)
      upstream.setTimeout(IDLE_TIMEOUT, () => upstream.destroy())
      upstream.on('response', (response) => {
        res.writeHead(response.statusCode ?? 502, response.statusMessage, forwardHeaders(response.headers))
        pipeline(response, res, () => {})
      })
      upstream.on('error', (error) => {
        if (!res.headersSent) reply(res, 502, `dogu sandbox: could not reach ${target.host}: ${error.message}`)
        else res.destroy()
      })
      res.once('close', () => {
        if (!res.writableFinished) upstream.destroy()
      })
      pipeline(req, upstream, () => {})
    })
  })

  await removeStaleSocket(options.socketPath)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.socketPath, () => {
      server.off('error', reject)
      resolve()
    })
  })
  // The sandboxed command runs as the bot's own uid, so owner-only access is enough.
  await chmod(options.socketPath, 0o600)

  return {
    socketPath: options.socketPath,
    refused,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve())
        for (const socket of sockets) socket.destroy()
      })
      return closing
    },
  }
}

async function resolveName(host: string): Promise<string[]> {
  const found = await dnsLookup(host, { all: true, verbatim: true })
  return found.map((entry) => entry.address)
}

/**
 * The addresses of this machine's own interfaces (all of them, up or down, any family) and
 * the broadcast address of each IPv4 network they are on: a service bound to `0.0.0.0`
 * answers on every one of them.
 */
export function ownAddresses(interfaces: NodeJS.Dict<NetworkInterfaceInfo[]>): BlockList {
  const own = new BlockList()
  for (const entries of Object.values(interfaces)) {
    for (const entry of entries ?? []) {
      const plain = entry.address.replace(/%.*$/, '')
      if (entry.family === 'IPv4') {
        own.addAddress(plain, 'ipv4')
        const broadcast = ipv4Broadcast(plain, entry.netmask)
        if (broadcast) own.addAddress(broadcast, 'ipv4')
      } else if (isIP(plain) === 6) own.addAddress(plain, 'ipv6')
    }
  }
  return own
}

/**
 * Why the proxy does not connect to `address`, or undefined: loopback, unspecified and
 * link-local addresses, an address of one of this machine's interfaces (`own`) or its
 * network's broadcast, broadcast and multicast. BlockList matches the IPv4-mapped IPv6 forms
 * (::ffff:192.0.2.2) against the IPv4 entries.
 */
export function refusedAddress(address: string, own: BlockList): string | undefined {
  const plain = address.replace(/%.*$/, '')
  const family = isIP(plain)
  // Something that is not an address cannot be checked, so it is not used.
  if (family === 0) return 'not an IP address'
  const type = family === 6 ? 'ipv6' : 'ipv4'
  if (LOCAL.check(plain, type)) return 'an address on the bot\'s own machine'
  if (own.check(plain, type)) return 'an address of one of the bot\'s own machine\'s interfaces'
  if (GROUP.check(plain, type)) return 'a broadcast or multicast address'
  return undefined
}

/** The broadcast address of the IPv4 network `address/netmask`, or undefined for a /31 or /32 (none). */
function ipv4Broadcast(address: string, netmask: string): string | undefined {
  const a = address.split('.').map(Number)
  const m = netmask.split('.').map(Number)
  if (a.length !== 4 || m.length !== 4 || m.some((x) => !(x >= 0 && x <= 255))) return undefined
  if (m[0] === 255 && m[1] === 255 && m[2] === 255 && m[3]! >= 254) return undefined
  return a.map((x, i) => (x | (~m[i]! & 255)) & 255).join('.')
}

/** `host:port` of a CONNECT request; an IPv6 host is in brackets. */
function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const match = /^(\[[^\]]+\]|[^:[\]]+):([0-9]{1,5})$/.exec(authority)
  if (!match) return undefined
  const port = Number(match[2])
  if (port < 1 || port > 65535) return undefined
  return { host: match[1]!, port }
}

function forwardHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  // Headers the Connection header names are hop-by-hop too (RFC 9110 7.6.1).
  const named = String(headers.connection ?? '').toLowerCase().split(',').map((name) => name.trim())
  const kept: IncomingHttpHeaders = {}
  for (const [name, value] of Object.entries(headers)) {
    if (!HOP_BY_HOP.has(name) && !named.includes(name)) kept[name] = value
  }
  // Transfer-Encoding is dropped with the rest: node frames what it forwards itself.
  return kept
}

/** A one-line answer on a raw tunnel socket, then close it. */
function answer(socket: Socket, status: number, message: string) {
  const body = `${message}\n`
  const reason = status === 403 ? 'Forbidden' : status === 400 ? 'Bad Request' : 'Bad Gateway'
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  )
  // The server accepts half-open sockets; ours is done once the answer is written.
  socket.once('finish', () => socket.destroy())
}

function reply(res: ServerResponse, status: number, message: string) {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' })
  res.end(`${message}\n`)
}

function normalizeHost(host: string): string {
  const lower = host.toLowerCase()
  return stripBrackets(lower.endsWith('.') ? lower.slice(0, -1) : lower)
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
}

/** One spelling per address, so ::0001 matches ::1. */
function canonicalIp(ip: string): string {
  if (isIP(ip) !== 6) return ip
  try {
    return new URL(`http://[${ip}]/`).hostname
  } catch {
    return ip // a zone index (fe80::1%eth0), which URL does not take
  }
}

async function removeStaleSocket(path: string) {
  const found = await lstat(path).catch(() => undefined)
  // Only a socket is removed: anything else at the path is a mistake listen() reports.
  if (found?.isSocket()) await unlink(path)
}
