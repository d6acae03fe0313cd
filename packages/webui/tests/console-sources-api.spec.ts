// The console's API for imported tool sources (issue 34): `sources.list` for the MCP servers
// view, `sources.authorize` to start an OAuth authorization bound to the operator, and
// `sources.complete` for the callback page. Refusals are the attacks: a forged state,
// another operator's state, a replayed code, a start for a server that needs none.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Approver, ToolRegistry, type ToolSource } from '@dogu/core'
import { afterEach, describe, expect, it } from 'vitest'
import { McpClientConnection } from '../../mcp/src/mcp-client-connection'
import { McpError } from '../../mcp/src/mcp-error'
import { EncryptedFileOAuthStore } from '../../mcp/src/oauth-token-store'
import { type OAuthMcpServer, startOAuthMcpServer } from '../../mcp/tests/fixtures/oauth-mcp-server'
import { ConsoleApi } from '../src/console-api'
import { ConsoleAsker } from '../src/console-asker'
import { ConsoleError } from '../src/console-error'
import { ConsoleLog } from '../src/console-log'
import { OAUTH_CALLBACK_PATH } from '../src/webui-service'
import { startConsoleApp, until } from './console-app'

/** A source that authorizes like an MCP connection: one state under way, bound to who started it. */
class FakeSource implements ToolSource {
  readonly kind = 'mcp'
  status: string
  tools: string[] = []
  lastError?: string
  pending?: { state: string; by?: string }
  started: (string | undefined)[] = []
  completed: { code: string; by?: string }[] = []
  /** When set, `authorize` with the right state still fails (the token endpoint refused the code). */
  exchangeFails?: string

  constructor(readonly name: string, status = 'needs-authorization') {
    this.status = status
  }

  get needsAuthorization() {
    return this.status === 'needs-authorization'
  }

  async startAuthorization(by?: string) {
    this.started.push(by)
    this.pending = { state: `state-of-${this.name}`, by }
    return `https://auth.example/authorize?state=${this.pending.state}`
  }

  async authorize(code: string, state: string, by?: string) {
    if (!this.pending || this.pending.state !== state || (this.pending.by !== undefined && this.pending.by !== by)) {
      throw new McpError('INVALID_AUTHORIZATION', `no authorization of MCP server "${this.name}" with this state is under way`)
    }
    this.pending = undefined
    if (this.exchangeFails) throw new Error(this.exchangeFails)
    this.completed.push({ code, by })
    this.status = 'connected'
    this.tools = [`${this.name}_whoami`]
  }
}

function api() {
  const registry = new ToolRegistry()
  const console = new ConsoleApi({
    registry,
    changeLogs: () => [],
    asker: new ConsoleAsker({ id: 'webui', platform: 'webui', authority: 4 }),
    log: new ConsoleLog(10),
    authority: 4,
  })
  return { registry, console }
}

// Operators as Koishi's console names a logged-in user: the login name on platform `console`.
const alice: Approver = { id: 'alice', platform: 'console', authority: 4 }
const bob: Approver = { id: 'bob', platform: 'console', authority: 4 }

/** The refusal `promise` ends with. */
async function refusal(promise: Promise<unknown>): Promise<ConsoleError> {
  const error = await promise.then(() => undefined, (error) => error)
  if (!ConsoleError.is(error)) throw new Error(`expected a ConsoleError, got ${error}`)
  return error
}

describe('sources.list', () => {
  it('lists each source with its status, tools, last error and whether it needs authorization; reads only', async () => {
    const { registry, console } = api()
    const tracker = new FakeSource('tracker')
    tracker.lastError = 'the server answered 401: authorization required'
    const docs = new FakeSource('docs', 'connected')
    docs.tools = ['docs_read', 'docs_search']
    registry.addSource(tracker)
    registry.addSource(docs)
    expect(await console.handle('sources.list', {})).toEqual([
      { kind: 'mcp', name: 'docs', status: 'connected', tools: ['docs_read', 'docs_search'], toolCount: 2, needsAuthorization: false },
      { kind: 'mcp', name: 'tracker', status: 'needs-authorization', tools: [], toolCount: 0, lastError: 'the server answered 401: authorization required', needsAuthorization: true },
    ])
    expect(ConsoleApi.isRead('sources.list')).toBe(true)
    expect(ConsoleApi.isRead('sources.authorize')).toBe(false)
    expect(ConsoleApi.isRead('sources.complete')).toBe(false)
  })
})

describe('sources.authorize', () => {
  it('starts an authorization for the operator who asks and gives its URL', async () => {
    const { registry, console } = api()
    const tracker = new FakeSource('tracker')
    registry.addSource(tracker)
    expect(await console.handle('sources.authorize', { kind: 'mcp', name: 'tracker' }, { operator: alice })).toEqual({ url: 'https://auth.example/authorize?state=state-of-tracker' })
    // The standalone console has one operator: the id its asker answers as.
    await console.handle('sources.authorize', { kind: 'mcp', name: 'tracker' })
    expect(tracker.started).toEqual(['console:alice', 'webui'])
  })

  it('refuses a server that does not need authorization, one without auth, and one that does not exist, starting nothing', async () => {
    const { registry, console } = api()
    const docs = new FakeSource('docs', 'connected')
    registry.addSource(docs)
    registry.addSource({ kind: 'mcp', name: 'local', status: 'connecting', tools: [] })
    const connected = await refusal(console.handle('sources.authorize', { kind: 'mcp', name: 'docs' }))
    expect(connected.code).toBe('INVALID_AUTHORIZATION')
    expect(connected.message).toBe('mcp source "docs" does not need authorization (it is connected)')
    expect(docs.started).toEqual([])
    const local = await refusal(console.handle('sources.authorize', { kind: 'mcp', name: 'local' }))
    expect(local.message).toBe('mcp source "local" has no authorization to start (no auth in its config)')
    const missing = await refusal(console.handle('sources.authorize', { kind: 'mcp', name: 'nope' }))
    expect([missing.code, missing.message]).toEqual(['NOT_FOUND', 'no mcp source named "nope"'])
    expect((await refusal(console.handle('sources.authorize', { kind: 'mcp' }))).code).toBe('INVALID_PAYLOAD')
  })
})

describe('sources.complete', () => {
  it('authorizes the server whose state it is, whichever source comes first, and says which', async () => {
    const { registry, console } = api()
    const alpha = new FakeSource('alpha')
    const tracker = new FakeSource('tracker')
    registry.addSource(alpha)
    registry.addSource(tracker)
    await console.handle('sources.authorize', { kind: 'mcp', name: 'alpha' }, { operator: alice })
    await console.handle('sources.authorize', { kind: 'mcp', name: 'tracker' }, { operator: alice })
    expect(await console.handle('sources.complete', { code: 'c1', state: 'state-of-tracker' }, { operator: alice })).toEqual({ kind: 'mcp', name: 'tracker', status: 'connected' })
    expect(tracker.completed).toEqual([{ code: 'c1', by: 'console:alice' }])
    // alpha was asked first and refused the state as not its own: still under way.
    expect(alpha.completed).toEqual([])
    expect(alpha.pending).toBeDefined()
  })

  it('refuses a forged state, another operator\'s state and a replayed code, authorizing nothing', async () => {
    const { registry, console } = api()
    const tracker = new FakeSource('tracker')
    registry.addSource(tracker)
    const forged = await refusal(console.handle('sources.complete', { code: 'c1', state: 'forged' }, { operator: alice }))
    expect(forged.code).toBe('INVALID_AUTHORIZATION')
    expect(forged.message).toMatch(/^no authorization with this state is under way/)

    await console.handle('sources.authorize', { kind: 'mcp', name: 'tracker' }, { operator: alice })
    expect((await refusal(console.handle('sources.complete', { code: 'c1', state: 'state-of-tracker' }, { operator: bob }))).code).toBe('INVALID_AUTHORIZATION')
    expect(tracker.completed).toEqual([])
    await console.handle('sources.complete', { code: 'c1', state: 'state-of-tracker' }, { operator: alice })
    const replayed = await refusal(console.handle('sources.complete', { code: 'c1', state: 'state-of-tracker' }, { operator: alice }))
    expect(replayed.code).toBe('INVALID_AUTHORIZATION')
    expect(tracker.completed).toHaveLength(1)
  })

  it('reports a failure of the server that owns the state as it is, not as a foreign state', async () => {
    const { registry, console } = api()
    const tracker = new FakeSource('tracker')
    tracker.exchangeFails = 'the token endpoint answered invalid_grant'
    registry.addSource(tracker)
    await console.handle('sources.authorize', { kind: 'mcp', name: 'tracker' })
    const failed = await refusal(console.handle('sources.complete', { code: 'c1', state: 'state-of-tracker' }))
    expect([failed.code, failed.message]).toEqual(['AUTHORIZATION_FAILED', 'mcp source "tracker": the token endpoint answered invalid_grant'])
  })

  it('needs both code and state', async () => {
    const { console } = api()
    expect((await refusal(console.handle('sources.complete', { state: 's' }))).message).toMatch(/^sources\.complete: .*code/)
    expect((await refusal(console.handle('sources.complete', { code: 'c' }))).message).toMatch(/^sources\.complete: .*state/)
  })
})

describe('sources.* against a real OAuth-protected MCP server', () => {
  let server: OAuthMcpServer | undefined
  let connection: McpClientConnection | undefined
  let dir: string | undefined
  afterEach(async () => {
    await connection?.close()
    await server?.close()
    if (dir) await rm(dir, { recursive: true, force: true })
    connection = server = dir = undefined
  })

  it('binds the URL to the operator who started it: bob cannot complete alice\'s, alice can, once', async () => {
    server = await startOAuthMcpServer()
    dir = await mkdtemp(join(tmpdir(), 'dogu-webui-sources-'))
    const { registry, console } = api()
    const redirectUrl = `http://127.0.0.1:1${OAUTH_CALLBACK_PATH}`
    connection = new McpClientConnection({
      name: 'tracker',
      server: { url: server.url, auth: 'oauth' },
      define: (tool) => registry.define(tool),
      oauth: { store: new EncryptedFileOAuthStore({ path: join(dir, 'mcp-oauth.json') }), redirectUrl },
    })
    registry.addSource(connection)
    connection.start()
    await until(async () => (await console.handle('sources.list', {}) as { status: string }[])[0]?.status === 'needs-authorization', 'the server to need authorization')

    const { url } = await console.handle('sources.authorize', { kind: 'mcp', name: 'tracker' }, { operator: alice }) as { url: string }
    // The person's part: the fixture's authorization server sends them back at once.
    const response = await fetch(url, { redirect: 'manual' })
    const back = new URL(response.headers.get('location')!)
    expect(back.origin + back.pathname).toBe(redirectUrl)
    const code = back.searchParams.get('code')!
    const state = back.searchParams.get('state')!

    expect((await refusal(console.handle('sources.complete', { code, state }, { operator: bob }))).code).toBe('INVALID_AUTHORIZATION')
    expect(server.counts.codeExchanges).toBe(0)
    expect(await console.handle('sources.complete', { code, state }, { operator: alice })).toEqual({ kind: 'mcp', name: 'tracker', status: 'connected' })
    const [listed] = await console.handle('sources.list', {}) as { status: string; tools: string[]; toolCount: number; needsAuthorization: boolean }[]
    expect(listed).toMatchObject({ status: 'connected', needsAuthorization: false })
    expect(listed!.tools).toEqual(expect.arrayContaining(['tracker_admin_op', 'tracker_whoami']))
    expect(listed!.toolCount).toBe(listed!.tools.length)
    expect(listed).not.toHaveProperty('lastError')
    // Replayed: nothing under way any more.
    expect((await refusal(console.handle('sources.complete', { code, state }, { operator: alice }))).code).toBe('INVALID_AUTHORIZATION')
    expect(server.counts.codeExchanges).toBe(1)
  })
})

describe('the standalone console\'s OAuth callback route', () => {
  let app: Awaited<ReturnType<typeof startConsoleApp>> | undefined
  afterEach(async () => {
    await app?.dispose()
    app = undefined
  })

  it('serves the console page, which completes the authorization; the route itself authorizes nothing', async () => {
    app = await startConsoleApp()
    const tracker = new FakeSource('tracker')
    app.ctx.tools.addSource(tracker)
    await app.send('sources.authorize', { kind: 'mcp', name: 'tracker' })
    // Anyone can make a browser open this link: it must not complete on its own.
    const response = await fetch(`${app.base}/mcp/oauth/callback?code=c1&state=state-of-tracker`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(response.headers.get('referrer-policy')).toBe('no-referrer')
    expect(await response.text()).toContain('<div id="app"></div>')
    expect(tracker.completed).toEqual([])
    // The page's API call, from the console's own origin, does complete it.
    expect(await app.send('sources.complete', { code: 'c1', state: 'state-of-tracker' })).toEqual({ status: 200, body: { kind: 'mcp', name: 'tracker', status: 'connected' } })
    expect(tracker.completed).toEqual([{ code: 'c1', by: 'webui' }])
  })

  it('takes sources.complete by POST only', async () => {
    app = await startConsoleApp()
    const response = await fetch(`${app.base}/api/sources.complete?payload=${encodeURIComponent(JSON.stringify({ code: 'c', state: 's' }))}`)
    expect(response.status).toBe(405)
  })
})
