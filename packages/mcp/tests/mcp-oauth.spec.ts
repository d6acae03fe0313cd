// Importing an MCP server behind OAuth, end to end: a real Cordis 4 Dogu app with the client
// plugin, the SDK's OAuth client, and an OAuth-protected MCP server on loopback
// (fixtures/oauth-mcp-server.ts). The person who authorizes is the test: it opens the URL
// (the fixture's authorization page redirects at once) and reads code and state from the
// redirect's Location, as the console's callback would receive them.
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { format } from 'node:util'
import { DoguPlugin } from '@dogu/cordis'
import type { ToolResult, ToolSource } from '@dogu/core'
import { Context } from 'cordis'
import { afterEach, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { McpClientPlugin, McpError } from '../src'
import { type OAuthMcpServer, type OAuthMcpServerOptions, startOAuthMcpServer } from './fixtures/oauth-mcp-server'

const NAME = 'vault'
const SESSION = { id: 's1', userId: 'alice' }
// Never fetched: the test reads the redirect's Location instead of following it.
const REDIRECT = 'http://127.0.0.1:1/dogu/mcp/oauth/callback'
// Small, so a loop of reconnections would show within a few waits.
const BACKOFF = 20
const NEEDS = /MCP server "vault" needs authorization/

const closers: (() => unknown)[] = []
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close()
})

/** Polls `condition` (bounded: 500 turns of 10 ms) and fails naming `what`. */
async function until(what: string, condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (condition()) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error(`timed out waiting for ${what}`)
}

interface App {
  ctx: Context
  source: ToolSource
  /** Every line logged (internal/info, warn, error) and every `tools/*` event, formatted. */
  lines: string[]
  results: ToolResult[]
  guard: ReturnType<typeof guardLogs>
  call(tool: string): Promise<ToolResult>
  dispose(): Promise<void>
}

/** A Dogu app importing `server` as `vault`, tokens in `dir`. */
async function app(server: OAuthMcpServer, dir: string): Promise<App> {
  const ctx = new Context()
  const guard = guardLogs(ctx)
  const lines: string[] = []
  const results: ToolResult[] = []
  for (const event of ['internal/info', 'internal/warn', 'internal/error'] as const) {
    ctx.on(event as any, (...args: unknown[]) => { lines.push(format(...args)) })
  }
  for (const event of ['tools/call-start', 'tools/call-progress', 'tools/call-log', 'tools/call-end', 'tools/changed'] as const) {
    ctx.on(event as any, (...args: unknown[]) => { lines.push(`${event} ${JSON.stringify(args)}`) })
  }
  await ctx.plugin(DoguPlugin, {
    audit: { storePath: join(dir, 'audit.jsonl') },
    // The server is untrusted, so its tools ask; here they are allowed by rule.
    permissions: { storePath: join(dir, 'permissions.json'), rules: [{ permission: `tool:${NAME}_*`, decision: 'allow' }] },
    background: { storePath: join(dir, 'background.json') },
  })
  await ctx.plugin(McpClientPlugin as any, {
    servers: { [NAME]: { url: server.url, auth: 'oauth' } },
    reconnect: { initialDelay: BACKOFF, maxDelay: BACKOFF * 2 },
    oauth: { storePath: join(dir, 'mcp-oauth.json'), redirectUrl: REDIRECT },
  })
  const source = ctx.tools.sources().find((source) => source.name === NAME)
  if (!source) throw new Error('the client plugin registered no source')
  let disposed = false
  const dispose = async () => {
    if (disposed) return
    disposed = true
    await ctx.fiber.dispose()
  }
  closers.push(dispose)
  let id = 0
  return {
    ctx, source, lines, results, guard, dispose,
    async call(tool) {
      const [result] = await ctx.tools.toolset({ session: SESSION }).execute([{ id: `c${++id}`, name: `${NAME}_${tool}`, arguments: {} }])
      results.push(result!)
      return result!
    },
  }
}

async function fixture(options?: OAuthMcpServerOptions): Promise<{ server: OAuthMcpServer; dir: string }> {
  const server = await startOAuthMcpServer(options)
  closers.push(() => server.close())
  const dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-oauth-'))
  closers.push(() => rm(dir, { recursive: true, force: true }))
  return { server, dir }
}

/** The person's part: open the URL; the authorization page redirects at once with code and state. */
async function approve(url: string): Promise<{ code: string; state: string }> {
  const response = await fetch(url, { redirect: 'manual' })
  const location = response.headers.get('location')
  if (!location) throw new Error(`${url} did not redirect (${response.status})`)
  const back = new URL(location)
  expect(back.origin + back.pathname).toBe(REDIRECT)
  return { code: back.searchParams.get('code')!, state: back.searchParams.get('state')! }
}

/** An operator authorizes the server from the console: start, open, come back. */
async function authorize(source: ToolSource, by = 'op1'): Promise<void> {
  const { code, state } = await approve(await source.startAuthorization!(by))
  await source.authorize!(code, state, by)
}

/** An app whose server is authorized and connected. */
async function authorizedApp(options?: OAuthMcpServerOptions) {
  const { server, dir } = await fixture(options)
  const dogu = await app(server, dir)
  dogu.guard.expect(NEEDS)
  await until('needs-authorization', () => dogu.source.status === 'needs-authorization')
  await authorize(dogu.source)
  expect(dogu.source.status).toBe('connected')
  return { server, dir, dogu }
}

const refused = (error: unknown) => McpError.is(error, 'INVALID_AUTHORIZATION')

describe('MCP import behind OAuth', () => {
  it('starts as needs-authorization without tools, and an operator\'s authorization brings them', async () => {
    const { server, dir } = await fixture()
    const { ctx, source, guard, call } = await app(server, dir)
    guard.expect(NEEDS)
    await until('needs-authorization', () => source.status === 'needs-authorization')
    expect(source.needsAuthorization).toBe(true)
    expect(source.tools).toEqual([])
    expect(ctx.tools.get(`${NAME}_whoami`)).toBeUndefined()
    expect(ctx.tools.toolset({ session: SESSION }).unavailable()).toEqual([
      { kind: 'mcp', name: NAME, status: 'needs-authorization', reason: expect.stringMatching(/needs authorization by an operator/) },
    ])

    await authorize(source)
    expect(source.status).toBe('connected')
    expect(source.tools).toEqual([`${NAME}_admin_op`, `${NAME}_echo_auth`, `${NAME}_whoami`])
    expect(ctx.tools.get(`${NAME}_whoami`)).toBeDefined()
    expect(ctx.tools.toolset({ session: SESSION }).unavailable()).toEqual([])
    const result = await call('whoami')
    expect(result.status).toBe('ok')
    expect(result.content).toMatch(/^client \S+ with mcp:tools/)
    expect(server.counts).toMatchObject({ registrations: 1, authorizations: 1, codeExchanges: 1 })
  })

  it('refuses a callback with a wrong state, another operator\'s, or a replayed code, and nothing changes', async () => {
    const { server, dir } = await fixture()
    const { source, guard } = await app(server, dir)
    guard.expect(NEEDS)
    await until('needs-authorization', () => source.status === 'needs-authorization')
    const { code, state } = await approve(await source.startAuthorization!('op1'))

    await expect(source.authorize!(code, `${state}x`, 'op1')).rejects.toSatisfy(refused)
    await expect(source.authorize!(code, 'A'.repeat(state.length), 'op1')).rejects.toSatisfy(refused)
    await expect(source.authorize!(code, state, 'op2')).rejects.toSatisfy(refused)
    await expect(source.authorize!(code, state)).rejects.toSatisfy(refused)
    expect(source.status).toBe('needs-authorization')
    expect(source.tools).toEqual([])
    expect(server.counts.codeExchanges).toBe(0)

    // The operator who started it completes it; the same code and state once more are refused.
    await source.authorize!(code, state, 'op1')
    expect(source.status).toBe('connected')
    const tools = [...source.tools]
    await expect(source.authorize!(code, state, 'op1')).rejects.toSatisfy(refused)
    expect(source.status).toBe('connected')
    expect(source.tools).toEqual(tools)
    expect(server.counts.codeExchanges).toBe(1)
  })

  it('refreshes an expired access token without asking anyone', async () => {
    const { server, dogu } = await authorizedApp()
    const authorizations = server.counts.authorizations
    server.expireAccessTokens()
    const result = await dogu.call('whoami')
    expect(result.status).toBe('ok')
    expect(server.counts.refreshes).toBe(1)
    expect(server.counts.authorizations).toBe(authorizations)
    expect(dogu.source.status).toBe('connected')
  })

  it('revoked tokens: the call says it needs authorization, the tools go, nothing retries, and re-authorizing brings them back', async () => {
    const { server, dogu } = await authorizedApp()
    const { source, ctx } = dogu
    server.revokeAll()
    const result = await dogu.call('whoami')
    expect(result.status).toBe('error')
    expect(result.content).toMatch(/needs authorization/)
    await until('the tools to go', () => source.status === 'needs-authorization' && source.tools.length === 0)
    expect(ctx.tools.get(`${NAME}_whoami`)).toBeUndefined()
    expect(ctx.tools.toolset({ session: SESSION }).unavailable()).toEqual([expect.objectContaining({ name: NAME, status: 'needs-authorization' })])

    // A loop would reach the server once per backoff period (20 to 40 ms): over many of them
    // the counts do not grow, however fast or slow the machine runs.
    const before = { ...server.counts }
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, BACKOFF * 2))
    expect(server.counts).toEqual(before)
    expect(source.status).toBe('needs-authorization')

    await authorize(source)
    expect(source.status).toBe('connected')
    expect(ctx.tools.get(`${NAME}_whoami`)).toBeDefined()
    expect((await dogu.call('whoami')).status).toBe('ok')
  })

  it('step-up: admin_op asks for authorization with mcp:admin, and succeeds once it is granted', async () => {
    const { server, dogu } = await authorizedApp()
    const { source } = dogu
    const first = await dogu.call('admin_op')
    expect(first.status).toBe('error')
    expect(first.content).toMatch(/needs authorization/)
    await until('needs-authorization', () => source.status === 'needs-authorization')

    const asked = server.requestedScopes.length
    await authorize(source)
    expect(server.requestedScopes.length).toBe(asked + 1)
    expect(server.requestedScopes.at(-1)!.split(' ')).toContain('mcp:admin')
    expect(source.status).toBe('connected')
    const second = await dogu.call('admin_op')
    expect(second.status).toBe('ok')
    expect(second.content).toBe('admin done')
  })

  // The server's metadata lists only mcp:tools, so only its challenge says mcp:admin is needed.
  it.each([
    ['no refresh token (the SDK\'s own step-up needs a person)', { refreshTokens: false, scopesSupported: ['mcp:tools'] }],
    ['a refresh token (a refresh keeps the old scope)', { refreshTokens: true, scopesSupported: ['mcp:tools'] }],
  ])('step-up as docs/mcp.md tells a host, with %s: the 403 marks the source, startAuthorization asks for the challenge\'s scope, and the call then succeeds', async (_, options) => {
    const { server, dogu } = await authorizedApp(options)
    const { source } = dogu
    expect(server.requestedScopes).toEqual(['mcp:tools'])
    const first = await dogu.call('admin_op')
    expect(first.status).toBe('error')
    expect(first.content).toMatch(/needs authorization \(more scope: mcp:tools mcp:admin\)/)
    await until('needs-authorization', () => source.status === 'needs-authorization')
    expect(source.lastError).toBe('the server wants more scope (mcp:tools mcp:admin) than the tokens have: authorizing again asks for it')

    // An authorization URL with the wider scope, not a reconnection on the old tokens.
    const url = await source.startAuthorization!('op1')
    expect(new URL(url).searchParams.get('scope')!.split(' ').sort()).toEqual(['mcp:admin', 'mcp:tools'])
    expect(source.status).toBe('needs-authorization')
    const { code, state } = await approve(url)
    await source.authorize!(code, state, 'op1')
    expect(server.requestedScopes.at(-1)!.split(' ').sort()).toEqual(['mcp:admin', 'mcp:tools'])
    expect(source.status).toBe('connected')
    expect(source.lastError).toBeUndefined()
    const second = await dogu.call('admin_op')
    expect(second.status).toBe('ok')
    expect(second.content).toBe('admin done')
    expect((await dogu.call('whoami')).content).toMatch(/with mcp:tools mcp:admin$/)
  })

  it('a restart with the same store connects on the kept tokens', async () => {
    const { server, dir, dogu } = await authorizedApp()
    await dogu.dispose()
    const authorizations = server.counts.authorizations
    const again = await app(server, dir)
    await until('connected', () => again.source.status === 'connected')
    expect((await again.call('whoami')).status).toBe('ok')
    expect(server.counts.authorizations).toBe(authorizations)
    expect(server.counts.registrations).toBe(1)
  })

  it('no token shows in the token file, the audit log, the grants, the logs, the events or a tool\'s result', async () => {
    const { server, dir, dogu } = await authorizedApp()
    server.expireAccessTokens()
    const echoed = await dogu.call('echo_auth')
    expect(echoed.status).toBe('ok')
    expect(echoed.content).toBe('authorization: Bearer [redacted]; token alone: [redacted]')
    expect((await dogu.call('whoami')).status).toBe('ok')
    await dogu.dispose()
    expect(server.issued.length).toBe(4)

    const store = await readFile(join(dir, 'mcp-oauth.json'), 'utf8')
    expect(JSON.parse(store)).toEqual({ format: 'dogu-mcp-oauth/1', records: { [NAME]: expect.any(String) } })
    const places = {
      'token file': store,
      'audit log': await readFile(join(dir, 'audit.jsonl'), 'utf8'),
      'grants': await readFile(join(dir, 'permissions.json'), 'utf8').catch(() => ''),
      'logged lines and events': dogu.lines.join('\n'),
      'tool results': JSON.stringify(dogu.results),
    }
    expect(places['audit log']).toContain(`${NAME}_echo_auth`)
    expect(dogu.lines.some((line) => line.startsWith('tools/call-end'))).toBe(true)
    for (const token of server.issued) {
      for (const [where, text] of Object.entries(places)) expect(text.includes(token), `${token} in the ${where}`).toBe(false)
    }
    expect((await stat(join(dir, 'mcp-oauth.key'))).mode & 0o777).toBe(0o600)
    expect((await stat(join(dir, 'mcp-oauth.json'))).mode & 0o777).toBe(0o600)
  })
})

describe('MCP import behind OAuth: config refused at load', () => {
  it.each([
    [{ clientSecret: 's3cret' }, 'servers.vault.auth.clientSecret needs clientId'],
    [{ clientMetadataUrl: 'http://example.com/client.json' }, 'servers.vault.auth.clientMetadataUrl must be an https URL'],
    [{ clientMetadataUrl: 'not a url' }, 'servers.vault.auth.clientMetadataUrl is not a URL'],
  ])('%j', async (auth, message) => {
    const { dir } = await fixture()
    const ctx = new Context()
    // Cordis reports the refused plugin as well as rejecting its load.
    guardLogs(ctx).expect(message)
    closers.push(() => ctx.fiber.dispose())
    await ctx.plugin(DoguPlugin, { audit: { storePath: join(dir, 'audit.jsonl') }, permissions: { storePath: join(dir, 'permissions.json') }, background: { storePath: join(dir, 'background.json') } })
    const loading = ctx.plugin(McpClientPlugin as any, {
      servers: { [NAME]: { url: 'http://127.0.0.1:1/mcp', auth } },
      oauth: { storePath: join(dir, 'mcp-oauth.json'), redirectUrl: REDIRECT },
    })
    await expect(loading).rejects.toSatisfy((error) => McpError.is(error, 'INVALID_OPTIONS') && (error as Error).message.startsWith(message))
    expect(ctx.tools.sources()).toEqual([])
  })
})

describe('MCP import behind OAuth without a redirect URL or a console server', () => {
  it('says where the redirect must come from, and only retries with backoff', async () => {
    const { server, dir } = await fixture()
    const ctx = new Context()
    const guard = guardLogs(ctx)
    guard.expect(`MCP server "${NAME}": cannot connect: MCP server "${NAME}": no OAuth redirect URL (no console server is loaded, or it is not listening yet)`)
    closers.push(() => ctx.fiber.dispose())
    await ctx.plugin(DoguPlugin, { audit: { storePath: join(dir, 'audit.jsonl') }, permissions: { storePath: join(dir, 'permissions.json') }, background: { storePath: join(dir, 'background.json') } })
    await ctx.plugin(McpClientPlugin as any, {
      servers: { [NAME]: { url: server.url, auth: 'oauth' } },
      // Long enough that a test run sees the first attempt only: a loop would show as a second.
      reconnect: { initialDelay: 60_000, maxDelay: 60_000 },
      oauth: { storePath: join(dir, 'mcp-oauth.json') },
    })
    const source = ctx.tools.sources().find((source) => source.name === NAME)!
    await until('the attempt to fail', () => source.lastError !== undefined)
    expect(source.lastError).toMatch(/set oauth\.redirectUrl, or load a server plugin/)
    expect(source.status).toBe('reconnecting')
    expect(source.tools).toEqual([])
    expect(server.counts.authorizations).toBe(0)
  })
})
