import { type AskAnswer, defineTool, PermissionEngine, type PermissionRequest, type PermissionRule, type Session, type ToolCall, ToolRegistry, type ToolResult } from '@dogu/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as HttpFetch from '../src'
import { createHttpFetchTool, createUndiciHttpClient, type HostResolver, type HttpClient } from '../src'
import { canonicalUrl } from '../src/canonical-url'
import { httpPermission } from '../src/http-fetch-tool'
import { startServer, type TestServer } from './servers'

let server: TestServer
let port: number

beforeAll(async () => {
  const text = (body: string) => (_: unknown, res: import('node:http').ServerResponse) => res.writeHead(200, { 'content-type': 'text/plain' }).end(body)
  server = await startServer({
    '/admin': text('ADMIN SECRET'),
    '/public': text('public page'),
    '/ask-me': text('asked page'),
    '/echo': (req, res, body) => res.writeHead(200, { 'content-type': 'text/plain' }).end(`${req.method} ${body}`),
    '/redirect': (req, res) => {
      const query = new URL(req.url!, 'http://x').searchParams
      res.writeHead(Number(query.get('status') ?? 302), { location: query.get('to')! }).end()
    },
  })
  port = server.port
})

afterAll(async () => {
  await server.close()
})

const user: Session = { id: 's1', userId: 'u1', platform: 'test', authority: 1 }

/**
 * A registry with the permission engine and `http_fetch` loaded through the plugin, as a
 * host does it; an asker the test answers with `answer`.
 */
function setup(rules: PermissionRule[], answer?: (request: PermissionRequest) => AskAnswer) {
  const engine = new PermissionEngine({ rules })
  const registry = new ToolRegistry()
  registry.permissions = engine
  const asked: PermissionRequest[] = []
  engine.addAsker((request) => {
    asked.push(request)
    return answer?.(request) ?? { decision: 'deny', by: 'u1', reason: 'the test answers no' }
  })
  HttpFetch.apply({ tools: { define: (tool) => registry.define(tool), registry } }, HttpFetch.Config({ allow: ['127.0.0.1'], timeout: 10_000 }))
  const call = async (args: Record<string, unknown>): Promise<ToolResult> =>
    (await registry.toolset({ session: user }).execute([{ id: 'c1', name: 'http_fetch', arguments: args }], { signal: AbortSignal.timeout(20_000) }))[0]
  return { engine, registry, asked, call }
}

/** The paths the loopback server was asked for while `run` ran. */
async function seenDuring(run: () => Promise<unknown>): Promise<string[]> {
  const before = server.requests.length
  await run()
  return server.requests.slice(before).map((line) => new URL(line.split(' ')[1], 'http://x').pathname)
}

const denyAdmin = (): PermissionRule[] => [
  { permission: 'http', target: `GET http://127.0.0.1:${port}/admin*`, decision: 'deny', name: 'no admin' },
  { permission: 'http', command: `POST http://127.0.0.1:${port}/admin*`, decision: 'deny', name: 'no admin writes' },
]

describe('http_fetch: rules see the URL as it is fetched', () => {
  it('gives the permission target in canonical form', () => {
    expect(httpPermission('GET', 'HTTP://Example.COM.:80/a/./b/../%61dmin?%7e=%2f#top')).toEqual({ name: 'http', target: 'GET http://example.com/a/admin?~=%2F', effect: 'read' })
    expect(httpPermission('POST', 'https://[0:0:0:0:0:ffff:7f00:1]:443/x')).toEqual({ name: 'http', target: 'POST https://127.0.0.1/x', effect: 'write' })
  })

  it('keeps the scheme\'s // and a path\'s repeated slashes in the target (it is no file path)', () => {
    expect(httpPermission('GET', 'http://h//a//b').target).toBe('GET http://h//a//b')
  })

  it('is matched by path-glob rules with the scheme\'s // intact', async () => {
    // A glob without whitespace is a path glob, which sees the target through core's path
    // normalizer; a normalizer that folded `//` would make this deny rule miss.
    const { call } = setup([{ permission: 'http', target: `GET*http://127.0.0.1:${port}/admin*`, decision: 'deny', name: 'path glob' }])
    const seen = await seenDuring(async () => {
      expect(await call({ url: `http://127.0.0.1:${port}/%61dmin` })).toMatchObject({ status: 'denied', content: expect.stringContaining('"path glob"') })
    })
    expect(seen).toEqual([])
  })

  it.each([
    ['scheme and host case', (p: number) => `HTTP://127.0.0.1:${p}/admin`],
    ['dot segments', (p: number) => `http://127.0.0.1:${p}/public/../admin`],
    ['a single-dot segment', (p: number) => `http://127.0.0.1:${p}/./admin`],
    ['encoded dot segments', (p: number) => `http://127.0.0.1:${p}/public/%2E%2e/admin`],
    ['an encoded unreserved character', (p: number) => `http://127.0.0.1:${p}/%61dmin`],
    ['every character encoded', (p: number) => `http://127.0.0.1:${p}/%61%64%6D%69%6E`],
    ['a backslash', (p: number) => `http://127.0.0.1:${p}\\admin`],
    ['a tab inside the path', (p: number) => `http://127.0.0.1:${p}/ad\tmin`],
    ['a fragment', (p: number) => `http://127.0.0.1:${p}/admin#section`],
    ['an empty query', (p: number) => `http://127.0.0.1:${p}/admin?`],
    ['a trailing dot on the address', (p: number) => `http://127.0.0.1.:${p}/admin`],
    ['a short IPv4', (p: number) => `http://127.1:${p}/admin`],
    ['a decimal IPv4', (p: number) => `http://2130706433:${p}/admin`],
    ['a hexadecimal IPv4', (p: number) => `http://0x7f000001:${p}/admin`],
    ['an octal IPv4', (p: number) => `http://0177.0.0.01:${p}/admin`],
    ['mixed IPv4 notations', (p: number) => `http://0x7f.0.1:${p}/admin`],
    ['a percent-encoded host', (p: number) => `http://%31%32%37.0.0.1:${p}/admin`],
    ['full-width digits in the host', (p: number) => `http://１２７.０.０.１:${p}/admin`],
    ['an IPv4-mapped IPv6 host', (p: number) => `http://[::ffff:127.0.0.1]:${p}/admin`],
    ['an IPv4-mapped IPv6 host in hex', (p: number) => `http://[0:0:0:0:0:FFFF:7F00:1]:${p}/admin`],
    ['a port with leading zeros', (p: number) => `http://127.0.0.1:0${p}/admin`],
  ])('refuses a denied URL written with %s, without contacting the server', async (_, spell) => {
    const { call } = setup(denyAdmin())
    let result: ToolResult | undefined
    const seen = await seenDuring(async () => { result = await call({ url: spell(port) }) })
    expect(result).toMatchObject({ status: 'denied', content: expect.stringContaining('"no admin"') })
    expect(seen).toEqual([])
  })

  it('fetches the URL in the form the rules saw', async () => {
    const { call } = setup([{ permission: 'http', target: `GET http://127.0.0.1:${port}/public`, decision: 'allow' }])
    const seen = await seenDuring(async () => {
      expect(await call({ url: `HTTP://2130706433:${port}/./%70ublic#x` })).toMatchObject({ status: 'ok', data: { finalUrl: `http://127.0.0.1:${port}/public` } })
    })
    expect(seen).toEqual(['/public'])
  })

  it('refuses URLs that carry credentials, which a rule would not see as the host', async () => {
    const { call } = setup(denyAdmin())
    const seen = await seenDuring(async () => {
      expect(await call({ url: `http://user:pass@127.0.0.1:${port}/admin` })).toMatchObject({ status: 'error', content: expect.stringContaining('credentials') })
      expect(await call({ url: `http://127.0.0.1:${port}@127.0.0.1:${port}/admin` })).toMatchObject({ status: 'error', content: expect.stringContaining('credentials') })
    })
    expect(seen).toEqual([])
  })

  it('drops the default port and a host name\'s trailing dot before the rules see it', async () => {
    // A stand-in for a public server on the default ports; it records what would be sent.
    const requests: string[] = []
    const client: HttpClient = async (request) => {
      requests.push(request.url.href)
      return new Response('public', { headers: { 'content-type': 'text/plain' } })
    }
    const resolver: HostResolver = async () => [{ address: '93.184.216.34', family: 4 }]
    const engine = new PermissionEngine({ rules: [
      { permission: 'http', target: 'GET http://public.example/admin*', decision: 'deny' },
      { permission: 'http', target: 'GET https://public.example/admin*', decision: 'deny' },
    ] })
    const registry = new ToolRegistry()
    registry.permissions = engine
    registry.define(createHttpFetchTool({ client, resolver, permissions: () => registry.permissions }))
    const call = async (url: string) => (await registry.toolset({ session: user }).execute([{ id: 'c', name: 'http_fetch', arguments: { url } }]))[0]
    for (const url of ['http://public.example:80/admin', 'http://PUBLIC.EXAMPLE./admin', 'https://public.example:443/admin', 'https://public.example.:0443/%61dmin']) {
      expect({ url, status: (await call(url)).status }).toEqual({ url, status: 'denied' })
    }
    expect(requests).toEqual([])
    expect(await call('http://public.example:80/fine')).toMatchObject({ status: 'ok' })
    expect(requests).toEqual(['http://public.example/fine'])
  })
})

describe('http_fetch: every redirect hop is authorized as its own request', () => {
  const redirect = (to: string, status = 302) => `http://127.0.0.1:${port}/redirect?status=${status}&to=${encodeURIComponent(to)}`

  it.each([301, 302, 303, 307, 308])('refuses a %i redirect to a denied URL before fetching it', async (status) => {
    const { call } = setup(denyAdmin())
    let result: ToolResult | undefined
    const seen = await seenDuring(async () => { result = await call({ url: redirect('/admin', status) }) })
    expect(result).toMatchObject({ status: 'denied', content: expect.stringContaining(`redirects (${status}) to GET http://127.0.0.1:${port}/admin`) })
    expect(result!.content).toContain('"no admin"')
    expect(seen).toEqual(['/redirect'])
  })

  it('refuses a redirect to another spelling of the denied URL, and one further down a chain', async () => {
    const { call } = setup(denyAdmin())
    for (const url of [
      redirect(`http://0x7f.1:${port}/public/%2e%2E/%61dmin`),
      redirect(`HTTP://[::ffff:7f00:1]:${port}/./admin#x`),
      redirect(redirect(redirect('/admin', 307), 301)),
    ]) {
      let result: ToolResult | undefined
      const seen = await seenDuring(async () => { result = await call({ url }) })
      expect(result).toMatchObject({ status: 'denied' })
      expect(seen.every((path) => path.startsWith('/redirect'))).toBe(true)
    }
  })

  it('asks about a redirect whose target needs approval, and follows it only when approved', async () => {
    const rules: PermissionRule[] = [{ permission: 'http', target: `GET http://127.0.0.1:${port}/ask-me*`, decision: 'ask' }]
    const refused = setup(rules)
    let result: ToolResult | undefined
    let seen = await seenDuring(async () => { result = await refused.call({ url: redirect('/%61sk-me') }) })
    expect(result).toMatchObject({ status: 'denied', content: expect.stringContaining('the test answers no') })
    expect(seen).toEqual(['/redirect'])
    expect(refused.asked.map((request) => request.permission.target)).toEqual([`GET http://127.0.0.1:${port}/ask-me`])
    expect(refused.asked[0].summary).toContain(`http://127.0.0.1:${port}/ask-me`)

    const approved = setup(rules, () => ({ decision: 'allow', by: 'u1' }))
    seen = await seenDuring(async () => { result = await approved.call({ url: redirect('/ask-me') }) })
    expect(result).toMatchObject({ status: 'ok', content: expect.stringContaining('asked page') })
    expect(seen).toEqual(['/redirect', '/ask-me'])
    expect(approved.asked).toHaveLength(1)
  })

  it('asks again for a write that a 307 carries to another URL, even when the first URL was allowed', async () => {
    const { call, asked } = setup([{ permission: 'http', command: `POST http://127.0.0.1:${port}/redirect*`, decision: 'allow' }])
    let result: ToolResult | undefined
    const seen = await seenDuring(async () => { result = await call({ url: redirect('/echo', 307), method: 'POST', body: 'payload' }) })
    expect(result).toMatchObject({ status: 'denied' })
    expect(asked.map((request) => [request.permission.target, request.effect])).toEqual([[`POST http://127.0.0.1:${port}/echo`, 'write']])
    expect(seen).toEqual(['/redirect'])
  })

  it('follows a redirect the rules allow', async () => {
    const { call, asked } = setup(denyAdmin())
    expect(await call({ url: redirect('/public') })).toMatchObject({ status: 'ok', data: { redirects: [`http://127.0.0.1:${port}/public`] } })
    expect(asked).toEqual([])
  })

  describe('without a permission gate', () => {
    const toolCall = (asks: string[]): ToolCall => ({
      id: 'c1', name: 'http_fetch', session: user, signal: AbortSignal.timeout(20_000), deadline: Infinity, mode: 'default', progress() {},
      ask: async (reason) => { asks.push(reason) },
      elicit: async () => ({ action: 'cancel', reason: 'no one to ask in this test' }),
      log() {},
      deny(reason): never { throw new Error(`denied: ${reason}`) },
    })
    const run = (options: Parameters<typeof createHttpFetchTool>[0], args: Record<string, unknown>, asks: string[] = []) =>
      createHttpFetchTool(options).run({ method: 'GET', headers: {}, raw: false, ...args } as any, toolCall(asks)) as Promise<{ data: { finalUrl: string } }>

    it('asks a person about each redirect when the tool was given no gate', async () => {
      const asks: string[] = []
      const result = await run({ client: createUndiciHttpClient(), allow: ['127.0.0.1'] }, { url: redirect('/public') }, asks)
      expect(result.data.finalUrl).toBe(`http://127.0.0.1:${port}/public`)
      expect(asks).toEqual([`http://127.0.0.1:${port}/redirect?status=302&to=%2Fpublic redirects (302) to GET http://127.0.0.1:${port}/public`])
    })

    it('follows read hops and refuses write hops when no permission service is loaded', async () => {
      const options = { client: createUndiciHttpClient(), allow: ['127.0.0.1'], permissions: () => undefined }
      expect((await run(options, { url: redirect('/public') })).data.finalUrl).toBe(`http://127.0.0.1:${port}/public`)
      const seen = await seenDuring(async () => {
        await expect(run(options, { url: redirect('/echo', 307), method: 'POST', body: 'x' })).rejects.toThrow(/no permission service is loaded/)
      })
      expect(seen).toEqual(['/redirect'])
    })
  })
})

describe('canonicalUrl', () => {
  it.each([
    ['HTTP://H/admin', 'http://h/admin'],
    ['http://h./admin', 'http://h/admin'],
    ['http://h:80/admin', 'http://h/admin'],
    ['https://h:443/admin', 'https://h/admin'],
    ['http://h/a%2fb?q=%7e%2f', 'http://h/a%2Fb?q=~%2F'],
    ['http://h/%C3%a9', 'http://h/%C3%A9'],
    ['http://h/é', 'http://h/%C3%A9'],
    ['http://[0:0:0:0:0:0:0:1]/', 'http://[::1]/'],
    ['http://xn--nxasmq6b.example/', 'http://xn--nxasmq6b.example/'],
    ['http://BÜCHER.example/', 'http://xn--bcher-kva.example/'],
  ])('writes %s as %s', (input, output) => {
    expect(canonicalUrl(input).href).toBe(output)
  })

  it('refuses what cannot be fetched', () => {
    expect(() => canonicalUrl('http://h../')).toThrow(/empty label/)
    expect(() => canonicalUrl('ftp://h/')).toThrow(/ftp: URLs cannot be fetched/)
    expect(() => canonicalUrl('http://u@h/')).toThrow(/credentials/)
  })
})

// defineTool is imported so the file fails to compile if core stops exporting it under that name.
void defineTool
