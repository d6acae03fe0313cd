import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http'
import HTTP from '@cordisjs/plugin-http'
import type { Tool, ToolCall } from '@dogu/core'
import { Context } from 'cordis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import * as HttpFetch from '../src'
import { createCordisHttpClient, createHttpFetchTool, createUndiciHttpClient, HttpFetchError, type HostResolver, type HttpClient, type HttpFetchToolOptions, type PinnedRequest } from '../src'
import { httpPermission } from '../src/http-fetch-tool'
import { startServer, type TestServer } from './servers'

let server: TestServer
let ctx: Context
let client: HttpClient
let disposeHttp: () => Promise<void>

beforeAll(async () => {
  server = await startServer({
    '/hello': (_, res) => res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('hello'),
    '/page': (_, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html><head><style>p{}</style><script>x()</script></head><body><h1>Title</h1><p>Some <b>bold</b> text.</p><img src="a.png"><ul><li>one</li><li>two</li></ul></body></html>'),
    '/json': (_, res) => res.writeHead(200, { 'content-type': 'application/problem+json' }).end('{"a":1}'),
    '/png': (_, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(100)),
    '/missing-type': (_, res) => { res.writeHead(200); res.end(Buffer.from([0x89, 0x50, 0, 0, 1])) },
    '/echo': (req, res, body) => res.writeHead(200, { 'content-type': 'text/plain' }).end(`${req.method} ${req.headers.host} ${body}`),
    '/infinite': (_, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' })
      const chunk = 'x'.repeat(16384)
      const pump = () => { while (!res.destroyed && res.write(chunk)); }
      res.on('drain', pump)
      pump()
    },
    '/hang': () => {},
    '/redirect': (req, res) => {
      const to = new URL(req.url!, 'http://x').searchParams.get('to')!
      const status = Number(new URL(req.url!, 'http://x').searchParams.get('status') ?? 302)
      res.writeHead(status, { location: to }).end()
    },
  })
  ctx = new Context()
  guardLogs(ctx)
  disposeHttp = (await ctx.plugin(HTTP)).dispose
  client = createCordisHttpClient(ctx.http)
})

afterAll(async () => {
  await disposeHttp()
  await server.close()
})

const call = (): ToolCall & { controller: AbortController } => {
  const controller = new AbortController()
  return { id: 'c1', name: 'http_fetch', session: { id: 's1' }, signal: controller.signal, deadline: Infinity, mode: 'default', progress() {}, ask: async () => {}, elicit: async () => ({ action: 'cancel', reason: 'no one to ask in this test' }), log() {}, deny(reason): never { throw new Error(reason) }, controller }
}

type Output = { text: string; data: { status: number; finalUrl: string; redirects: string[]; bytes: number; truncated: boolean; contentType?: string } }
const fetchWith = (options: Partial<HttpFetchToolOptions>, args: Record<string, unknown>, theCall = call()) => {
  const tool: Tool = createHttpFetchTool({ client, ...options })
  return tool.run({ method: 'GET', headers: {}, raw: false, ...args } as any, theCall) as Promise<Output>
}
const failure = (promise: Promise<unknown>) => promise.then(() => { throw new Error('expected a failure') }, (error) => error as HttpFetchError)

// A client for addresses that must never be contacted: it fails the test if it is called.
const untouchable: HttpClient = async (request) => { throw new Error(`connected to ${request.address.address}`) }

// A stand-in for a public server: records what it was asked and answers without a network.
function stubClient(respond: (request: PinnedRequest) => Response) {
  const requests: PinnedRequest[] = []
  const stub: HttpClient = async (request) => {
    requests.push(request)
    return respond(request)
  }
  return { stub, requests }
}

const resolverOf = (table: Record<string, string[]>) => {
  const calls: string[] = []
  const resolver: HostResolver = async (hostname) => {
    calls.push(hostname)
    const answers = table[hostname]
    if (!answers) throw new Error(`ENOTFOUND ${hostname}`)
    return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
  }
  return { resolver, calls }
}

describe('http_fetch: SSRF guard', () => {
  it('refuses the loopback test server by default and never connects', async () => {
    const before = server.requests.length
    const error = await failure(fetchWith({}, { url: `${server.origin}/hello` }))
    expect(error.code).toBe('ADDRESS_REFUSED')
    expect(error.message).toContain('refused to connect to 127.0.0.1: it is a loopback address')
    expect(server.requests.length).toBe(before)
  })

  it('reaches it once the address is allowlisted, through ctx.http', async () => {
    const result = await fetchWith({ allow: ['127.0.0.1'] }, { url: `${server.origin}/hello` })
    expect(result.data).toMatchObject({ status: 200, contentType: 'text/plain', bytes: 5, truncated: false })
    expect(result.text).toBe(`HTTP 200 OK — GET ${server.origin}/hello (text/plain, 5 bytes)\n\nhello`)
  })

  it.each([
    ['http://127.1/', '127.0.0.1', 'a loopback address'],
    ['http://0x7f000001/', '127.0.0.1', 'a loopback address'],
    ['http://2130706433/', '127.0.0.1', 'a loopback address'],
    ['http://0177.0.0.1/', '127.0.0.1', 'a loopback address'],
    ['http://0x7f.1/', '127.0.0.1', 'a loopback address'],
    ['http://[::ffff:127.0.0.1]/', '127.0.0.1', 'a loopback address'],
    ['http://[::1]/', '::1', 'a loopback address'],
    ['http://[::]/', '::', 'an unspecified address'],
    ['http://0/', '0.0.0.0', 'an unspecified address'],
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254', 'a cloud metadata address'],
    ['http://[fd00:ec2::254]/', 'fd00:ec2::254', 'a cloud metadata address'],
    ['http://100.64.0.1/', '100.64.0.1', 'a carrier-grade NAT address'],
    ['http://10.0.0.1/', '10.0.0.1', 'a private address'],
    ['http://172.16.0.1/', '172.16.0.1', 'a private address'],
    ['http://192.168.0.1/', '192.168.0.1', 'a private address'],
    ['http://[fe80::1]/', 'fe80::1', 'a link-local address'],
    ['http://[fc00::1]/', 'fc00::1', 'a unique local address'],
    ['http://224.0.0.1/', '224.0.0.1', 'a multicast address'],
    ['http://255.255.255.255/', '255.255.255.255', 'a broadcast address'],
    ['http://[64:ff9b::10.0.0.1]/', '64:ff9b::a00:1', 'an IPv6 form of a private address'],
    ['http://[::127.0.0.1]/', '::7f00:1', 'a deprecated IPv4-compatible address'],
    ['http://[2002:7f00:1::]/', '2002:7f00:1::', 'an IPv6 form of a loopback address'],
  ])('refuses %s', async (url, address, reason) => {
    const error = await failure(fetchWith({ client: untouchable }, { url }))
    expect(error.code).toBe('ADDRESS_REFUSED')
    expect(error.message).toContain(`refused to connect to ${address}: it is ${reason}`)
  })

  it('refuses a host name that resolves to a private address, or to any private address among public ones', async () => {
    const { resolver } = resolverOf({ 'internal.test': ['10.0.0.7'], 'mixed.test': ['93.184.216.34', '192.168.1.1'] })
    const internal = await failure(fetchWith({ client: untouchable, resolver }, { url: 'http://internal.test/' }))
    expect(internal.message).toContain('refused to connect to 10.0.0.7 (internal.test resolves to 10.0.0.7): it is a private address')
    const mixed = await failure(fetchWith({ client: untouchable, resolver }, { url: 'https://mixed.test/' }))
    expect(mixed.message).toContain('192.168.1.1')
  })

  it('opens an allowlisted host name without checking its addresses', async () => {
    const { resolver } = resolverOf({ 'intranet.test': ['10.0.0.7'] })
    const { stub, requests } = stubClient(() => new Response('inside', { headers: { 'content-type': 'text/plain' } }))
    const result = await fetchWith({ client: stub, resolver, allow: ['intranet.test'] }, { url: 'http://intranet.test/x' })
    expect(result.text).toContain('inside')
    expect(requests.map((request) => request.address)).toEqual([{ address: '10.0.0.7', family: 4 }])
  })

  it('checks every redirect hop: a redirect to a private address is refused before connecting', async () => {
    const before = server.requests.length
    const error = await failure(fetchWith({ allow: ['127.0.0.1'] }, { url: `${server.origin}/redirect?to=${encodeURIComponent('http://192.168.0.10/admin')}` }))
    expect(error.code).toBe('ADDRESS_REFUSED')
    expect(error.message).toContain('192.168.0.10: it is a private address')
    expect(server.requests.slice(before)).toEqual([expect.stringMatching(/^GET \/redirect\?to=/)])
    // Loopback is not one range: 127.0.0.2 is not the allowlisted 127.0.0.1.
    const other = await failure(fetchWith({ allow: ['127.0.0.1'] }, { url: `${server.origin}/redirect?to=${encodeURIComponent(`http://127.0.0.2:${server.port}/hello`)}` }))
    expect(other.message).toContain('refused to connect to 127.0.0.2')
  })

  it('checks a redirect from a public host to a name that resolves privately', async () => {
    const { resolver } = resolverOf({ 'public.test': ['93.184.216.34'], 'internal.test': ['10.1.2.3'] })
    const { stub, requests } = stubClient(() => new Response(null, { status: 302, headers: { location: 'http://internal.test/secret' } }))
    const error = await failure(fetchWith({ client: stub, resolver }, { url: 'http://public.test/' }))
    expect(error.message).toContain('internal.test resolves to 10.1.2.3')
    expect(requests).toHaveLength(1)
  })

  it('connects to the address it checked: a rebinding resolver gets one question per hop', async () => {
    let answers = 0
    // Public on the first answer, loopback on every later one.
    const rebinding: HostResolver = async () => [{ address: answers++ ? '127.0.0.1' : '93.184.216.34', family: 4 }]
    const { stub, requests } = stubClient(() => new Response('public', { headers: { 'content-type': 'text/plain' } }))
    const result = await fetchWith({ client: stub, resolver: rebinding }, { url: 'http://rebind.test/' })
    expect(result.text).toContain('public')
    expect(answers).toBe(1)
    expect(requests.map((request) => [request.url.href, request.address.address])).toEqual([['http://rebind.test/', '93.184.216.34']])
  })

  it('pins the real connection through ctx.http: a name only the injected resolver knows reaches the checked address', async () => {
    const { resolver, calls } = resolverOf({ 'pinned.test': ['127.0.0.1'] })
    const result = await fetchWith({ resolver, allow: ['127.0.0.0/8'] }, { url: `http://pinned.test:${server.port}/echo` })
    expect(result.text).toContain(`GET pinned.test:${server.port}`)
    expect(calls).toEqual(['pinned.test'])
  })

  it('refuses non-http protocols, including the file: and data: URLs ctx.http would serve', async () => {
    for (const url of ['file:///etc/passwd', 'data:text/plain,hi', 'ftp://example.com/', 'gopher://x/']) {
      expect((await failure(fetchWith({ client: untouchable }, { url }))).code).toBe('UNSUPPORTED_PROTOCOL')
    }
    expect((await failure(fetchWith({ client: untouchable }, { url: 'not a url' }))).code).toBe('INVALID_URL')
    const redirect = await failure(fetchWith({ allow: ['127.0.0.1'] }, { url: `${server.origin}/redirect?to=${encodeURIComponent('file:///etc/passwd')}` }))
    expect(redirect.code).toBe('UNSUPPORTED_PROTOCOL')
  })
})

describe('http_fetch: limits', () => {
  it('stops reading at the size cap and closes the connection', async () => {
    const closed = server.closed('/infinite')
    const result = await fetchWith({ allow: ['127.0.0.1'], maxBytes: 1000 }, { url: `${server.origin}/infinite` })
    expect(result.data).toMatchObject({ bytes: 1000, truncated: true })
    expect(result.text).toContain('[The body was cut at 1000 bytes.]')
    expect(result.text.endsWith('x'.repeat(1000))).toBe(true)
    await closed
  })

  it('times out a server that never answers and closes the connection', async () => {
    const closed = server.closed('/hang')
    const error = await failure(fetchWith({ allow: ['127.0.0.1'], timeout: 200 }, { url: `${server.origin}/hang` }))
    expect(error.code).toBe('TIMEOUT')
    expect(error.message).toBe('no complete response within 200 ms')
    await closed
  })

  it('stops when the call is cancelled, with the cancellation as the reason', async () => {
    const theCall = call()
    const closed = server.closed('/hang').then(() => 'closed')
    const pending = fetchWith({ allow: ['127.0.0.1'] }, { url: `${server.origin}/hang` }, theCall)
    const waitForRequest = async () => { while (!server.requests.some((line) => line.startsWith('GET /hang'))) await new Promise((resolve) => setTimeout(resolve, 10)) }
    await waitForRequest()
    theCall.controller.abort(new Error('user cancelled'))
    expect((await failure(pending)).message).toBe('user cancelled')
    expect(await closed).toBe('closed')
  })

  it('stops after the redirect limit', async () => {
    const loop = `${server.origin}/redirect?to=${encodeURIComponent('/redirect?to=/hello')}`
    const error = await failure(fetchWith({ allow: ['127.0.0.1'], maxRedirects: 1 }, { url: loop }))
    expect(error.code).toBe('TOO_MANY_REDIRECTS')
    const ok = await fetchWith({ allow: ['127.0.0.1'], maxRedirects: 2 }, { url: loop })
    expect(ok.data).toMatchObject({ status: 200, finalUrl: `${server.origin}/hello`, redirects: [`${server.origin}/redirect?to=/hello`, `${server.origin}/hello`] })
  })

  it('refuses content types that are not text, and bodies without a type that look binary', async () => {
    const png = await failure(fetchWith({ allow: ['127.0.0.1'] }, { url: `${server.origin}/png` }))
    expect([png.code, png.message]).toEqual(['CONTENT_TYPE_REFUSED', `${server.origin}/png returned image/png, which is not a text type this tool returns`])
    expect((await failure(fetchWith({ allow: ['127.0.0.1'] }, { url: `${server.origin}/missing-type` }))).code).toBe('CONTENT_TYPE_REFUSED')
    expect((await fetchWith({ allow: ['127.0.0.1'] }, { url: `${server.origin}/json` })).text).toContain('{"a":1}')
  })
})

describe('http_fetch: content and methods', () => {
  it('reduces HTML to readable text, or returns the source with raw', async () => {
    const page = await fetchWith({ allow: ['127.0.0.1'] }, { url: `${server.origin}/page` })
    expect(page.text.split('\n\n').slice(1).join('\n\n')).toBe('TITLE\n\nSome bold text.\n\n * one\n * two')
    const raw = await fetchWith({ allow: ['127.0.0.1'] }, { url: `${server.origin}/page`, raw: true })
    expect(raw.text).toContain('<h1>Title</h1>')
  })

  it('reads with GET and HEAD and writes with the other methods', () => {
    expect(httpPermission('GET', 'https://a.test/')).toEqual({ name: 'http', target: 'GET https://a.test/', effect: 'read' })
    expect(httpPermission('HEAD', 'https://a.test/').effect).toBe('read')
    expect(['POST', 'PUT', 'PATCH', 'DELETE'].map((method) => httpPermission(method, 'https://a.test/').effect)).toEqual(['write', 'write', 'write', 'write'])
    const tool = createHttpFetchTool({ client })
    expect(tool.traits).toMatchObject({ effect: 'write', background: false })
    expect(tool.permission!({ url: 'https://a.test/', method: 'POST' } as any, call())).toEqual({ name: 'http', target: 'POST https://a.test/', effect: 'write' })
  })

  it('sends a body with POST, and refuses one on GET', async () => {
    const result = await fetchWith({ allow: ['127.0.0.1'] }, { url: `${server.origin}/echo`, method: 'POST', body: 'payload' })
    expect(result.text).toContain(`POST 127.0.0.1:${server.port} payload`)
    expect((await failure(fetchWith({ allow: ['127.0.0.1'] }, { url: `${server.origin}/echo`, body: 'x' }))).code).toBe('INVALID_REQUEST')
  })

  it('turns POST into GET on 303, and refuses to resend a body to another origin on 307', async () => {
    const see = await fetchWith({ allow: ['127.0.0.1'] }, { url: `${server.origin}/redirect?status=303&to=/echo`, method: 'POST', body: 'payload' })
    expect(see.text).toContain(`GET 127.0.0.1:${server.port} \n`.trimEnd())
    const { resolver } = resolverOf({ 'other.test': ['127.0.0.1'] })
    const to = `http://other.test:${server.port}/echo`
    const error = await failure(fetchWith({ allow: ['127.0.0.1'], resolver }, { url: `${server.origin}/redirect?status=307&to=${encodeURIComponent(to)}`, method: 'POST', body: 'payload' }))
    expect(error.code).toBe('REDIRECT_REFUSED')
    const same = await fetchWith({ allow: ['127.0.0.1'] }, { url: `${server.origin}/redirect?status=307&to=/echo`, method: 'PUT', body: 'again' })
    expect(same.text).toContain(`PUT 127.0.0.1:${server.port} again`)
  })

  it('returns a 404 as a normal result', async () => {
    const result = await fetchWith({ allow: ['127.0.0.1'] }, { url: `${server.origin}/nope` })
    expect(result.data.status).toBe(404)
    expect(result.text).toContain('HTTP 404 Not Found')
  })
})

describe('http_fetch: credentials on redirects', () => {
  // Two loopback servers on different ports are two origins.
  const seen: [origin: string, headers: IncomingHttpHeaders][] = []
  const routes = (name: () => string) => ({
    '/headers': (req: IncomingMessage, res: ServerResponse) => {
      seen.push([name(), req.headers])
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok')
    },
    '/redirect': (req: IncomingMessage, res: ServerResponse) => {
      const query = new URL(req.url!, 'http://x').searchParams
      res.writeHead(Number(query.get('status')), { location: query.get('to')! }).end()
    },
  })
  let first: TestServer
  let second: TestServer
  beforeAll(async () => {
    first = await startServer(routes(() => first.origin))
    second = await startServer(routes(() => second.origin))
  })
  afterAll(async () => {
    await first.close()
    await second.close()
  })

  const CREDENTIALS = { Authorization: 'Bearer secret', cookie: 'session=secret', 'PROXY-AUTHORIZATION': 'Basic secret' }
  const redirect = (from: TestServer, status: number, to: string) => `${from.origin}/redirect?status=${status}&to=${encodeURIComponent(to)}`
  const fetchSeen = async (url: string, options: Partial<HttpFetchToolOptions> = {}) => {
    seen.length = 0
    await fetchWith({ allow: ['127.0.0.1'], ...options }, { url, headers: { ...CREDENTIALS, 'x-trace': 'kept' } })
    return seen.map(([origin, headers]) => ({
      origin,
      trace: headers['x-trace'],
      authorization: headers.authorization,
      cookie: headers.cookie,
      proxyAuthorization: headers['proxy-authorization'],
    }))
  }

  it.each([301, 302, 303, 307, 308])('drops Authorization, Cookie and Proxy-Authorization when a %i changes origin', async (status) => {
    expect(await fetchSeen(redirect(first, status, `${second.origin}/headers`))).toEqual([
      { origin: second.origin, trace: 'kept', authorization: undefined, cookie: undefined, proxyAuthorization: undefined },
    ])
  })

  it.each([301, 302, 303, 307, 308])('keeps them when a %i stays on the same origin', async (status) => {
    expect(await fetchSeen(redirect(first, status, '/headers'))).toEqual([
      { origin: first.origin, trace: 'kept', authorization: 'Bearer secret', cookie: 'session=secret', proxyAuthorization: 'Basic secret' },
    ])
  })

  it('treats another host name on the same port as another origin', async () => {
    const { resolver } = resolverOf({ 'other.test': ['127.0.0.1'] })
    const url = redirect(first, 302, `http://other.test:${first.port}/headers`)
    expect(await fetchSeen(url, { resolver })).toEqual([
      { origin: first.origin, trace: 'kept', authorization: undefined, cookie: undefined, proxyAuthorization: undefined },
    ])
  })

  it('does not restore them when a later redirect comes back to the first origin', async () => {
    const url = redirect(first, 307, redirect(second, 307, `${first.origin}/headers`))
    expect(await fetchSeen(url)).toEqual([
      { origin: first.origin, trace: 'kept', authorization: undefined, cookie: undefined, proxyAuthorization: undefined },
    ])
  })
})

describe('http_fetch: plugin', () => {
  it('registers http_fetch through ctx.tools and undoes its ctx.http registration on dispose', async () => {
    const root = new Context()
    guardLogs(root)
    await root.plugin(HTTP)
    const defined: Tool[] = []
    root.provide('tools', { define: (tool: Tool) => { defined.push(tool); return () => {} } })
    const proxies = () => Object.keys((root.http as any)._proxies).filter((key) => key.startsWith('dogu-pinned-'))
    const fiber = await root.plugin(HttpFetch, { allow: ['127.0.0.1'], maxBytes: 2048 })
    expect(defined.map((tool) => tool.name)).toEqual(['http_fetch'])
    expect(proxies()).toHaveLength(1)
    const result = await defined[0].run({ url: `${server.origin}/hello`, method: 'GET', headers: {}, raw: false } as any, call()) as Output
    expect(result.data.status).toBe(200)
    await fiber.dispose()
    expect(proxies()).toEqual([])
  })
})

// Hosts whose ctx.http takes no per-request connection (Koishi 4), or without one, get a
// client straight over undici: the same pinning, redirects left to the tool, bodies capped.
describe('http_fetch: the undici client', () => {
  const direct = createUndiciHttpClient()

  it('pins the connection: a name only the injected resolver knows reaches the checked address', async () => {
    const { resolver, calls } = resolverOf({ 'pinned.test': ['127.0.0.1'] })
    const result = await fetchWith({ client: direct, resolver, allow: ['127.0.0.0/8'] }, { url: `http://pinned.test:${server.port}/echo` })
    expect(result.text).toContain(`GET pinned.test:${server.port}`)
    expect(calls).toEqual(['pinned.test'])
  })

  it('leaves redirects to the tool, which checks every hop', async () => {
    const ok = await fetchWith({ client: direct, allow: ['127.0.0.1'] }, { url: `${server.origin}/redirect?to=${encodeURIComponent('/hello')}` })
    expect(ok.data).toMatchObject({ status: 200, redirects: [`${server.origin}/hello`] })
    const refused = await failure(fetchWith({ client: direct, allow: ['127.0.0.1'] }, { url: `${server.origin}/redirect?to=${encodeURIComponent('http://192.168.0.10/admin')}` }))
    expect(refused.code).toBe('ADDRESS_REFUSED')
  })

  it('stops reading at the size cap and closes the connection', async () => {
    const closed = server.closed('/infinite')
    const result = await fetchWith({ client: direct, allow: ['127.0.0.1'], maxBytes: 1000 }, { url: `${server.origin}/infinite` })
    expect(result.data).toMatchObject({ bytes: 1000, truncated: true })
    await closed
  })

  it('sends the method, headers and body; an unreachable port is a FETCH_FAILED error', async () => {
    const posted = await fetchWith({ client: direct, allow: ['127.0.0.1'] }, { url: `${server.origin}/echo`, method: 'POST', body: 'payload', headers: { 'content-type': 'text/plain' } })
    expect(posted.text).toContain(`POST 127.0.0.1:${server.port} payload`)
    const dead = await failure(fetchWith({ client: direct, allow: ['127.0.0.1'] }, { url: 'http://127.0.0.1:1/' }))
    expect(dead.code).toBe('FETCH_FAILED')
  })

  it('is what the plugin uses when ctx.http is missing or not Cordis 4\'s', async () => {
    const root = new Context()
    guardLogs(root)
    const defined: Tool[] = []
    root.provide('tools', { define: (tool: Tool) => { defined.push(tool); return () => {} } })
    // An http service without Cordis 4's proxy(): the shape of Koishi's.
    root.provide('http', { get: async () => '' })
    const fiber = await root.plugin(HttpFetch, { allow: ['127.0.0.1'] })
    const result = await defined[0].run({ url: `${server.origin}/hello`, method: 'GET', headers: {}, raw: false } as any, call()) as Output
    expect(result.data.status).toBe(200)
    await fiber.dispose()
    // No http service at all: the plugin does not wait for one.
    const bare = new Context()
    guardLogs(bare)
    bare.provide('tools', { define: (tool: Tool) => { defined.push(tool); return () => {} } })
    const alone = await bare.plugin(HttpFetch, { allow: ['127.0.0.1'] })
    const direct = await defined[1].run({ url: `${server.origin}/hello`, method: 'GET', headers: {}, raw: false } as any, call()) as Output
    expect(direct.data.status).toBe(200)
    await alone.dispose()
  })
})

describe('http_fetch: preview', () => {
  const tool = () => createHttpFetchTool({ client, allow: ['127.0.0.1'] })
  const preview = (args: Record<string, unknown>) => { const t = tool(); return t.preview!(t.args(args), call()) }

  it('gives the method, the URL as it will be fetched, and the body\'s size and type', async () => {
    expect(await preview({ url: 'HTTPS://API.Example.COM:443/v1/%7Eusers/./me/../items?q=%61b#frag', method: 'POST', headers: { 'Content-Type': 'application/json', authorization: 'Bearer sk-secret' }, body: '{"name":"tea","count":2}' })).toEqual({
      url: 'https://api.example.com/v1/~users/items?q=ab',
      text: [
        'POST https://api.example.com/v1/~users/items?q=ab',
        'body: 24 bytes, content-type application/json',
        'headers: Content-Type, authorization (values not shown)',
      ].join('\n'),
    })
    expect(await preview({ url: 'http://0x7f000001/admin', method: 'DELETE' })).toEqual({ url: 'http://127.0.0.1/admin', text: 'DELETE http://127.0.0.1/admin\nno body' })
    expect((await preview({ url: 'https://x.example/upload', method: 'PUT', body: 'x'.repeat(5000) }))!.text).toBe('PUT https://x.example/upload\nbody: 4.9 KiB (5000 bytes), no content-type header')
  })

  it('never shows credentials written in the URL, and says the call will be refused', async () => {
    const shown = (await preview({ url: 'https://alice:hunter2@api.example.com/private', method: 'POST', body: 'x' }))!
    expect(shown).toEqual({ url: 'https://***@api.example.com/private', text: 'http_fetch will be refused (INVALID_URL): https://***@api.example.com carries credentials in the URL; send them in an Authorization header instead' })
    expect(JSON.stringify(shown)).not.toContain('hunter2')
    expect(await preview({ url: 'file:///etc/passwd', method: 'POST' })).toEqual({ url: 'file:///etc/passwd', text: 'http_fetch will be refused (UNSUPPORTED_PROTOCOL): file: URLs cannot be fetched; use http or https' })
    expect((await preview({ url: 'https://x.example/', method: 'GET', body: 'x' }))!.text).toBe('GET https://x.example/\nhttp_fetch will be refused (INVALID_REQUEST): a GET request cannot have a body\nbody: 1 byte, no content-type header')
  })

  it('a redirect hop asked through call.ask carries the hop\'s URL as its preview', async () => {
    const asked: Array<[string, unknown]> = []
    const theCall = { ...call(), ask: async (reason: string, options?: unknown) => { asked.push([reason, options]) } }
    const result = await fetchWith({ allow: ['127.0.0.1'] }, { url: `${server.origin}/redirect?to=%2Fhello&status=307`, method: 'POST', body: 'b' }, theCall)
    expect(result.data.finalUrl).toBe(`${server.origin}/hello`)
    expect(asked).toEqual([[
      `${server.origin}/redirect?to=%2Fhello&status=307 redirects (307) to POST ${server.origin}/hello`,
      { preview: { url: `${server.origin}/hello`, text: `POST ${server.origin}/hello\nredirected (307) from ${server.origin}/redirect?to=%2Fhello&status=307` } },
    ]])
  })

  it('a redirect hop asked through the permission gate carries it too', async () => {
    const approvals: any[] = []
    const gate = {
      authorize: () => ({ decision: 'ask' as const }),
      approve: async (request: any) => { approvals.push(request); return { decision: 'allow' as const } },
    }
    await fetchWith({ allow: ['127.0.0.1'], permissions: () => gate }, { url: `${server.origin}/redirect?to=%2Fhello` })
    expect(approvals.map((request) => request.preview)).toEqual([{ url: `${server.origin}/hello`, text: `GET ${server.origin}/hello\nredirected (302) from ${server.origin}/redirect?to=%2Fhello` }])
  })
})
