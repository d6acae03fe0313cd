// An imported MCP server behind OAuth, authorized by a person through Koishi: `dogu.mcp`
// shows it needs authorization, `dogu.mcp.auth` gives an admin the URL privately, and the
// redirect comes back to /dogu/mcp/oauth/callback on Koishi's own server (a real one on a
// free port, the fixture a real authorization server on loopback).
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ToolSource } from '@dogu/core'
import type { ForkScope } from 'koishi'
import { afterEach, describe, expect, it } from 'vitest'
import { McpClientPlugin } from '../../mcp/src'
import { type OAuthMcpServer, startOAuthMcpServer } from '../../mcp/tests/fixtures/oauth-mcp-server'
import { freePort } from '../../../test-support/free-port'
import { mcpOAuthCallback, OAUTH_CALLBACK_PATH } from '../src/mcp-oauth-callback'
import { type ChatApp, chatApp } from './chat-harness'
import { koishiApp, settle } from './koishi-app'
import { ServerPlugin } from './console-app'

let cleanup: (() => Promise<void>) | undefined
afterEach(async () => {
  await cleanup?.()
  cleanup = undefined
})

/** The chat app, Koishi's server with the callback route, and the MCP client importing the fixture as `docs`. */
async function setup() {
  const fixture: OAuthMcpServer = await startOAuthMcpServer()
  const dir = await mkdtemp(join(tmpdir(), 'dogu-koishi-mcp-oauth-'))
  const t: ChatApp = await chatApp()
  // The mock adapter has no private channels of its own: real adapters make one like this.
  t.bot.createDirectChannel = async (userId: string) => ({ id: `private:${userId}`, type: 1 })
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const forks: ForkScope[] = []
  forks.push(t.app.plugin(ServerPlugin, { host: '127.0.0.1', port }))
  const callback = t.app.plugin({ name: 'dogu-mcp-oauth-callback', inject: ['tools', 'server'], apply: mcpOAuthCallback })
  forks.push(callback)
  // The client says on Koishi's log that a person has to act.
  t.guard.expect('[dogu-mcp] MCP server "docs" needs authorization')
  forks.push(t.app.plugin(McpClientPlugin as any, {
    servers: { docs: { url: fixture.url, auth: 'oauth' } },
    oauth: { storePath: join(dir, 'mcp-oauth.json'), redirectUrl: base + OAUTH_CALLBACK_PATH },
  }))
  await t.settle()
  const http = t.app.server._http
  await until(() => http.listening, 'Koishi\'s server to listen')
  const docs = () => t.app.tools.sources().find((source) => source.name === 'docs') as ToolSource
  await until(() => docs()?.status === 'needs-authorization', 'docs to need authorization')
  cleanup = async () => {
    // fetch keeps connections alive: dropped, or the server's close waits for them.
    http.closeAllConnections()
    for (const fork of forks.reverse()) {
      fork.dispose()
      await t.settle()
    }
    await t.dispose()
    await fixture.close()
    await rm(dir, { recursive: true, force: true })
  }
  return { t, fixture, base, docs, callback }
}

/** Waits for `condition`, at most 10 s. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** The authorization URL in a message. */
function urlIn(text: string): string {
  const match = /https?:\/\/\S+/.exec(text)
  if (!match) throw new Error(`no URL in ${JSON.stringify(text)}`)
  return match[0]
}

/** What a browser does with the URL: the authorization server (which approves at once here) redirects to Location. */
async function approve(url: string): Promise<string> {
  const response = await fetch(url, { redirect: 'manual' })
  expect(response.status).toBe(302)
  return response.headers.get('location')!
}

async function open(url: string): Promise<{ status: number; text: string }> {
  const response = await fetch(url, { headers: { 'accept-language': 'en-US,en;q=0.9' } })
  return { status: response.status, text: await response.text() }
}

describe('an MCP server behind OAuth, authorized from Koishi\'s chat', () => {
  it('an admin sees it needs authorization, gets the link privately from a group, and the redirect to Koishi\'s server authorizes it', async () => {
    const { t, fixture, base, docs } = await setup()
    const admin = t.client('admin')
    expect(await admin.receive('dogu.mcp')).toEqual(['导入的 MCP 服务器（1 个）：\ndocs：⚠ 需要授权（管理员发送 dogu.mcp.auth docs） · 0 个工具'])
    expect(t.app.tools.get('docs_whoami')).toBeUndefined()

    // In the group only that it was sent; the link itself in the admin's private chat.
    expect(await admin.receive('dogu.mcp.auth docs')).toEqual(['已私信发送授权链接给你。'])
    const sent = await t.outbox.next()
    expect(sent.channelId).toBe('private:admin')
    expect(sent.text).toContain('打开此链接授权 MCP 服务器 docs')
    expect(t.outbox.sent.filter((message) => message.channelId === 'room')).toEqual([])
    const url = urlIn(sent.text)
    expect(url.startsWith(fixture.issuer)).toBe(true)

    const location = await approve(url)
    expect(location.startsWith(base + OAUTH_CALLBACK_PATH + '?')).toBe(true)
    const page = await open(location)
    expect(page).toMatchObject({ status: 200, text: expect.stringContaining('<p>Authorized docs. You can close this page.</p>') })

    expect(docs().status).toBe('connected')
    // Every tool the fixture serves (whoami, admin_op, and what it adds for other tests).
    const tools = docs().tools
    expect(tools).toEqual(expect.arrayContaining(['docs_admin_op', 'docs_whoami']))
    expect(await admin.receive('dogu.mcp')).toEqual([`导入的 MCP 服务器（1 个）：\ndocs：已连接 · ${tools.length} 个工具`])
    expect(t.app.tools.get('docs_whoami')).toBeDefined()
    // Authorized once: the server is connected, nothing to authorize again.
    expect(await admin.receive('dogu.mcp.auth docs')).toEqual(['MCP 服务器 docs 不需要授权（它已连接）。'])
    expect(fixture.counts.codeExchanges).toBe(1)
  })

  it('a non-admin cannot start an authorization, nor list the servers', async () => {
    const { t, docs } = await setup()
    expect(await t.client('alice').receive('dogu.mcp.auth docs')).toEqual(['权限不足。'])
    expect(await t.client('alice').receive('dogu.mcp')).toEqual(['权限不足。'])
    // ops (3) may look, not authorize (4).
    expect(await t.client('ops').receive('dogu.mcp.auth docs')).toEqual(['权限不足。'])
    expect(t.outbox.sent).toEqual([])
    expect(docs().status).toBe('needs-authorization')
  })

  it('in a private chat the link is the answer; an unknown server and a missing name are told apart', async () => {
    const { t } = await setup()
    const privately = t.app.mock.client('admin')
    const [reply] = await privately.receive('dogu.mcp.auth docs')
    expect(reply).toContain('打开此链接授权 MCP 服务器 docs')
    expect(urlIn(reply)).toContain('state=')
    expect(t.outbox.sent).toEqual([])
    expect(await privately.receive('dogu.mcp.auth nope')).toEqual(['没有名为 nope 的 MCP 服务器。导入的有：docs'])
    expect(await privately.receive('dogu.mcp.auth')).toEqual(['请指定服务器：dogu.mcp.auth <服务器>。需要授权的：docs'])
  })

  it('the callback with a forged state, a replayed code or an authorization server\'s error authorizes nothing, and says so', async () => {
    const { t, fixture, docs, callback, base } = await setup()
    const [reply] = await t.app.mock.client('admin').receive('dogu.mcp.auth docs')
    const location = new URL(await approve(urlIn(reply)))
    const code = location.searchParams.get('code')!

    // The real code with a state of the same shape that nobody was given.
    const forged = new URL(location)
    forged.searchParams.set('state', randomBytes(24).toString('base64url'))
    expect(await open(forged.href)).toEqual({ status: 400, text: expect.stringContaining('No authorization with this state is under way') })
    expect(await open(`${base}${OAUTH_CALLBACK_PATH}?code=${code}`)).toEqual({ status: 400, text: expect.stringContaining('This link has no code or state') })
    expect(docs().status).toBe('needs-authorization')
    expect(fixture.counts.codeExchanges).toBe(0)

    // What the authorization server said, escaped.
    const error = await open(`${base}${OAUTH_CALLBACK_PATH}?error=access_denied&error_description=${encodeURIComponent('<script>alert(1)</script>')}`)
    expect(error).toEqual({ status: 400, text: expect.stringContaining('<p>The authorization server did not authorize: access_denied (&lt;script&gt;alert(1)&lt;/script&gt;)</p>') })
    expect(error.text).not.toContain('<script>')

    // The genuine redirect still works, once: a replay finds nothing under way.
    expect((await open(location.href)).status).toBe(200)
    expect(docs().status).toBe('connected')
    expect(await open(location.href)).toEqual({ status: 400, text: expect.stringContaining('Nothing was authorized.') })
    expect(fixture.counts.codeExchanges).toBe(1)

    // The route goes with its plugin.
    callback.dispose()
    await t.settle()
    expect((await open(location.href)).status).toBe(404)
  })

  it('from a group, a link that cannot be sent privately is not posted in the group either', async () => {
    const { t } = await setup()
    t.bot.createDirectChannel = async (userId: string) => {
      throw new Error(`user ${userId} does not take private messages`)
    }
    t.guard.expect('dogu.mcp.auth cannot message mock:admin privately: user admin does not take private messages')
    expect(await t.client('admin').receive('dogu.mcp.auth docs')).toEqual(['无法私信你，授权链接没有发出。请在与机器人的私聊中发送 dogu.mcp.auth docs。'])
    expect(t.outbox.sent).toEqual([])
  })

  it('the page follows the browser\'s language', async () => {
    const { base } = await setup()
    const response = await fetch(`${base}${OAUTH_CALLBACK_PATH}?code=x&state=y`, { headers: { 'accept-language': 'zh-CN,zh;q=0.9,en;q=0.8' } })
    expect(response.headers.get('cache-control')).toBe('no-store')
    expect(await response.text()).toContain('没有与此 state 对应的授权在进行中')
  })
})

describe('dogu.mcp with sources of other states', () => {
  it('shows a failing server\'s last error, skips sources of other kinds, and says a server without OAuth needs no authorization', async () => {
    const t = await chatApp()
    cleanup = () => t.dispose()
    const source = (name: string, kind: string, status: string, lastError?: string): ToolSource => ({ name, kind, status, tools: [], ...lastError ? { lastError } : {} })
    t.app.plugin({
      name: 'sources',
      inject: ['tools'],
      apply(ctx: any) {
        ctx.tools.addSource(source('files', 'mcp', 'reconnecting', 'connect ECONNREFUSED 127.0.0.1:9'))
        ctx.tools.addSource(source('other', 'feed', 'connected'))
      },
    })
    await t.settle()
    const admin = t.client('admin')
    expect(await admin.receive('dogu.mcp')).toEqual(['导入的 MCP 服务器（1 个）：\nfiles：重新连接中 · 0 个工具 · 最近的错误：connect ECONNREFUSED 127.0.0.1:9'])
    expect(await admin.receive('dogu.mcp.auth files')).toEqual(['MCP 服务器 files 不需要授权（它重新连接中）。'])
    expect(await admin.receive('dogu.mcp.auth other')).toEqual(['没有名为 other 的 MCP 服务器。导入的有：files'])
  })
})

describe('the Dogu plugin and Koishi\'s server', () => {
  it('a client loaded with the server, before it listens, finds the callback URL once an authorization needs it', async () => {
    const fixture = await startOAuthMcpServer()
    const dir = await mkdtemp(join(tmpdir(), 'dogu-koishi-mcp-redirect-'))
    const { app, guard } = await koishiApp()
    const port = await freePort()
    // Koishi's server knows its port only once it listens, after both plugins are applied.
    const server = app.plugin(ServerPlugin, { host: '127.0.0.1', port })
    guard.expect('[dogu-mcp] MCP server "docs" needs authorization')
    const client = app.plugin(McpClientPlugin as any, { servers: { docs: { url: fixture.url, auth: 'oauth' } }, oauth: { storePath: join(dir, 'mcp-oauth.json') } })
    try {
      await settle(app)
      const docs = () => app.tools.sources().find((source) => source.name === 'docs')
      await until(() => docs()?.status === 'needs-authorization', 'docs to need authorization')
      const url = new URL(await docs()!.startAuthorization!('admin'))
      expect(url.searchParams.get('redirect_uri')).toBe(`http://127.0.0.1:${port}${OAUTH_CALLBACK_PATH}`)
    } finally {
      app.server._http.closeAllConnections()
      client.dispose()
      server.dispose()
      await settle(app)
      await fixture.close()
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('serves the callback once @koishijs/plugin-server is loaded after it', async () => {
    const { app } = await koishiApp()
    const port = await freePort()
    const server = app.plugin(ServerPlugin, { host: '127.0.0.1', port })
    await settle(app)
    const http = app.server._http
    await until(() => http.listening, 'Koishi\'s server to listen')
    const url = `http://127.0.0.1:${port}${OAUTH_CALLBACK_PATH}?code=x&state=y`
    try {
      expect(await open(url)).toEqual({ status: 400, text: expect.stringContaining('No authorization with this state is under way') })
    } finally {
      http.closeAllConnections()
      server.dispose()
      await settle(app)
    }
  })
})
