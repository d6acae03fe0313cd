// An imported MCP server's OAuth tokens in Koishi's database: a SQLite driver that starts
// after the MCP client takes the tokens from the file, the table holds them sealed, and a
// restarted bot on the same database is connected without a second authorization.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { MinatoDatabase, ToolSource } from '@dogu/core'
import SQLite from '@minatojs/driver-sqlite'
import type { App, ForkScope } from 'koishi'
import { afterEach, describe, expect, it } from 'vitest'
import { McpClientPlugin } from '../../mcp/src'
import { type OAuthMcpServer, startOAuthMcpServer } from '../../mcp/tests/fixtures/oauth-mcp-server'
import { koishiApp, settle } from './koishi-app'

const TABLE = 'dogu_mcp_oauth'
const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** What a browser does: the fixture approves at once and redirects; the code and state go to the source. */
async function authorize(source: ToolSource): Promise<void> {
  const url = await source.startAuthorization!('admin')
  const location = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location')!)
  await source.authorize!(location.searchParams.get('code')!, location.searchParams.get('state')!, 'admin')
}

async function fixture(): Promise<OAuthMcpServer> {
  const server = await startOAuthMcpServer()
  cleanups.push(() => server.close())
  return server
}

/** A Koishi app with Dogu and the MCP client importing `server` as `docs`, its token file in `dir`; `sqliteFirst`: that database loaded before the client. */
async function bot(server: OAuthMcpServer, dir: string, sqliteFirst?: string) {
  // The server is untrusted, so its tools ask; here they are allowed by rule.
  const { app, guard } = await koishiApp({ dogu: { permissions: { rules: [{ permission: 'tool:docs_*', decision: 'allow' }] } } as never })
  let sqlite = sqliteFirst ? app.plugin(SQLite as never, { path: sqliteFirst }) : undefined
  const client = app.plugin(McpClientPlugin as any, {
    servers: { docs: { url: server.url, auth: 'oauth' } },
    oauth: { storePath: join(dir, 'mcp-oauth.json'), redirectUrl: 'http://127.0.0.1:9/dogu/mcp/oauth/callback' },
  })
  await settle(app)
  const docs = () => app.tools.sources().find((source) => source.name === 'docs') as ToolSource
  return { app, guard, client, docs, loadSQLite: (path: string) => { sqlite = app.plugin(SQLite as never, { path }) }, unload: async () => { client.dispose(); sqlite?.dispose(); await settle(app) } }
}

async function rows(app: App) {
  return (app.get('database') as unknown as MinatoDatabase).get(TABLE, {})
}

async function fileRecords(dir: string): Promise<string[]> {
  try {
    return Object.keys(JSON.parse(await readFile(join(dir, 'mcp-oauth.json'), 'utf8')).records)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}

describe('MCP OAuth tokens in Koishi\'s database', () => {
  it('a driver loaded after the client takes the file\'s tokens; the table holds them sealed; a restart on the database needs no authorization', async () => {
    const server = await fixture()
    const dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-oauth-db-'))
    cleanups.push(() => rm(dir, { recursive: true, force: true }))
    const dbPath = join(dir, 'koishi.db')

    // Authorized before any database: the record is in the file.
    const first = await bot(server, dir)
    first.guard.expect('[dogu-mcp] MCP server "docs" needs authorization')
    await until(() => first.docs()?.status === 'needs-authorization', 'docs to need authorization')
    await authorize(first.docs())
    await until(() => first.docs().status === 'connected', 'docs to connect')
    expect(await fileRecords(dir)).toEqual(['docs'])

    // The driver starts late: the record moves into the table and out of the file.
    first.loadSQLite(dbPath)
    await settle(first.app)
    await until(() => !!first.app.get('database'), 'the database')
    let table: Record<string, unknown>[] = []
    // Moved in the background of the switch: written to the table, then removed from the file.
    for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
      table = await rows(first.app).catch(() => [])
      if (table.length && !(await fileRecords(dir)).length) break
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    expect(table.map((row) => row.server)).toEqual(['docs'])
    expect(await fileRecords(dir)).toEqual([])
    // Sealed: no token, client id or verifier readable in the table.
    const stored = JSON.stringify(table)
    for (const secret of server.issued) expect(stored).not.toContain(secret)
    expect(stored).not.toContain('access_token')

    // A refresh after the switch is written to the table, not the file.
    const refreshed = server.counts.refreshes
    server.expireAccessTokens()
    const [result] = await first.app.tools.toolset({ session: { id: 'mock:room', platform: 'mock', userId: 'admin', channelId: 'room' } }).execute([{ id: 'c1', name: 'docs_whoami', arguments: {} }])
    expect(result.status).toBe('ok')
    expect(server.counts.refreshes).toBe(refreshed + 1)
    const after = await rows(first.app)
    expect(after[0].record).not.toBe(table[0].record)
    expect(await fileRecords(dir)).toEqual([])
    // The first bot goes (its client and driver unloaded); the second starts from nothing but the database.
    await first.unload()

    // Restarted, the driver loaded before the client (koishi.yml's usual order): connected at once.
    const second = await bot(server, dir, dbPath)
    await until(() => second.docs()?.status === 'connected', 'the restarted bot to connect')
    await second.unload()

    // Restarted, the driver starting only after the client found no tokens in the file: the
    // server waits for a person until the table's tokens are tried, then connects with them.
    const third = await bot(server, dir)
    third.guard.expect('[dogu-mcp] MCP server "docs" needs authorization')
    await until(() => third.docs()?.status === 'needs-authorization', 'the third bot to find no tokens in the file')
    third.loadSQLite(dbPath)
    await settle(third.app)
    await until(() => third.docs().status === 'connected', 'the third bot to connect with the table\'s tokens')
    expect(third.docs().tools).toContain('docs_whoami')
    expect(server.counts.codeExchanges).toBe(1)
  })
})
