// An imported MCP server behind OAuth as a Koishi owner deploys it: koishi.yml names Koishi's
// server (with its selfUrl), a SQLite driver, and Dogu with `mcp.servers`; @dogu/mcp is
// installed beside koishi-plugin-dogu. An admin asks for the link in a private chat, the
// authorization server (the fixture, on loopback) sends the browser back to Koishi's own
// /dogu/mcp/oauth/callback, and the server connects. After a restart (SIGINT, as Ctrl-C) the
// tokens come from the database: connected with no second authorization, in both load orders.
import { access, readFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { createRequire } from 'node:module'
import { afterEach, describe, expect, it } from 'vitest'
import { type OAuthMcpServer, startOAuthMcpServer } from '../../mcp/tests/fixtures/oauth-mcp-server'
import { freePort } from '../../../test-support/free-port'
import { type Instance, instanceDir, startInstance } from './koishi-worker'

const require = createRequire(import.meta.url)
const KOISHI_PACKAGE = resolve(__dirname, '..')
/** What the owner installs besides: @dogu/mcp, and Koishi's server (a new instance has it). */
const MORE = {
  '@dogu/mcp': resolve(__dirname, '../../mcp'),
  '@koishijs/plugin-server': dirname(require.resolve('@koishijs/plugin-server/package.json', { paths: [KOISHI_PACKAGE] })),
}

let fixture: OAuthMcpServer | undefined
afterEach(async () => {
  await fixture?.close()
  fixture = undefined
})

const yml = (order: string[], port: number, url: string) => `plugins:\n${order.map((part) => ({
  mock: `  mock:\n    selfId: '514'\n`,
  server: `  server:\n    host: 127.0.0.1\n    port: ${port}\n    selfUrl: http://127.0.0.1:${port}\n`,
  database: `  database-sqlite:\n    path: data/koishi.db\n`,
  dogu: `  dogu:\n    notices:\n      enabled: false\n    mcp:\n      servers:\n        docs:\n          url: ${url}\n          auth: oauth\n`,
  probe: `  owner-probe: {}\n`,
}[part])).join('')}`

const start = (dir: string) => startInstance(dir, (status) => status.database && status.background, 'the database and ctx.background')

/** `dogu.mcp` as the admin sees it, once it matches `pattern`. */
async function mcpStatus(instance: Instance, pattern: RegExp): Promise<string> {
  let last = ''
  await instance.until(async () => {
    last = (await instance.op<string[]>('receive', { userId: 'admin', text: 'dogu.mcp' })).join('\n')
    return pattern.test(last)
  }, `dogu.mcp to match ${pattern} (last: ${JSON.stringify(last)})`)
  return last
}

/** The lines the instance logged besides the one warning that a person has to authorize. */
const problems = (instance: Instance) => instance.problems().filter((line) => !line.includes('MCP server "docs" needs authorization: open the MCP servers view'))

async function exists(path: string) {
  return access(path).then(() => true, () => false)
}

describe('an MCP server behind OAuth, from koishi.yml', () => {
  for (const order of [['mock', 'server', 'database', 'dogu', 'probe'], ['mock', 'server', 'dogu', 'database', 'probe']]) {
    const where = order.indexOf('database') < order.indexOf('dogu') ? 'before' : 'after'
    it(`the database ${where} Dogu: authorized once from a private chat through Koishi's server, and still authorized after a restart`, async () => {
      fixture = await startOAuthMcpServer()
      const port = await freePort()
      const dir = await instanceDir(yml(order, port, fixture.url), MORE)
      let instance = await start(dir)
      await instance.op('initUser', { userId: 'admin', authority: 4 })
      await mcpStatus(instance, /docs：⚠ 需要授权/)

      // In a private chat the link is the answer; it goes to the authorization server and back to Koishi's callback.
      const [reply] = await instance.op<string[]>('receive', { userId: 'admin', text: 'dogu.mcp.auth docs', private: true })
      const url = /https?:\/\/\S+/.exec(reply)![0]
      expect(url.startsWith(fixture.issuer)).toBe(true)
      const location = (await fetch(url, { redirect: 'manual' })).headers.get('location')!
      expect(location.startsWith(`http://127.0.0.1:${port}/dogu/mcp/oauth/callback?`)).toBe(true)
      const page = await fetch(location)
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('docs')
      const connected = await mcpStatus(instance, /docs：已连接 · \d+ 个工具/)
      expect(connected).toContain('已连接')
      expect(fixture.counts.codeExchanges).toBe(1)
      expect(problems(instance)).toEqual([])

      // The tokens are in the database (the file store holds none); the key stays on disk, 0600.
      const key = join(dir, 'data/dogu/mcp-oauth.key')
      expect(await exists(key)).toBe(true)
      expect((await import('node:fs')).statSync(key).mode & 0o777).toBe(0o600)
      const file = join(dir, 'data/dogu/mcp-oauth.json')
      if (await exists(file)) expect(JSON.parse(await readFile(file, 'utf8')).records).toEqual({})

      await instance.stop('SIGINT')
      expect(problems(instance)).toEqual([])
      instance = await start(dir)
      await mcpStatus(instance, /docs：已连接 · \d+ 个工具/)
      expect(fixture.counts.codeExchanges).toBe(1)
      expect(fixture.counts.authorizations).toBe(1)
      expect(problems(instance)).toEqual([])
    })
  }
})
