// The MCP client's token store as a host's database comes and goes: the file's records move
// into the table (where it has none of that server), the file keeps no copy, and a table
// that fails leaves the records where they were.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { MinatoDatabase } from '@dogu/core'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { FollowingOAuthStore } from '../src/following-oauth-store'
import { EncryptedFileOAuthStore } from '../src/oauth-token-store'

/** A minato table in memory, with the few methods the store uses (rows keyed by `server`). */
function memoryDatabase(fail?: string) {
  const rows = new Map<string, Record<string, unknown>>()
  const database: MinatoDatabase = {
    extend() {},
    async get(_table, query) {
      if (fail) throw new Error(fail)
      return [...rows.values()].filter((row) => query.server === undefined || row.server === query.server)
    },
    async set() { return {} },
    async upsert(_table, values) { for (const row of values) rows.set(String(row.server), row) },
    async remove(_table, query) { rows.delete(String(query.server)) },
  }
  return { database, rows }
}

const warnings: string[] = []
const logger = { debug() {}, info() {}, warn: (format: string, ...args: unknown[]) => { warnings.push([format, ...args].join(' ')) } }

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dogu-following-oauth-'))
  warnings.length = 0
})
afterEach(() => rm(dir, { recursive: true, force: true }))

const fileStore = () => new EncryptedFileOAuthStore({ path: join(dir, 'mcp-oauth.json') })
const inFile = async () => Object.keys(JSON.parse(await readFile(join(dir, 'mcp-oauth.json'), 'utf8')).records).sort()

describe('FollowingOAuthStore', () => {
  it('moves the file\'s records into the table, keeps the table\'s own, and leaves the file empty', async () => {
    const store = new FollowingOAuthStore(fileStore(), logger)
    await store.set('docs', { tokens: { access_token: 'file-docs', token_type: 'bearer' } })
    await store.set('tracker', { tokens: { access_token: 'file-tracker', token_type: 'bearer' } })
    const { database } = memoryDatabase()
    // Another instance on this database authorized `tracker` since: its record wins.
    const other = new FollowingOAuthStore(fileStore(), logger)
    await other.use(database)
    await other.set('tracker', { tokens: { access_token: 'table-tracker', token_type: 'bearer' } })

    let switched = 0
    store.onSwitch(() => { switched++ })
    await store.use(database)
    await new Promise((resolve) => setImmediate(resolve))
    expect(switched).toBe(1)
    expect((await store.get('docs'))?.tokens?.access_token).toBe('file-docs')
    expect((await store.get('tracker'))?.tokens?.access_token).toBe('table-tracker')
    expect(await inFile()).toEqual([])

    // The database goes: new records go to the file again.
    await store.use(undefined)
    await store.set('docs', { tokens: { access_token: 'after', token_type: 'bearer' } })
    expect(await inFile()).toEqual(['docs'])
    expect(warnings).toEqual([])
  })

  it('a table that cannot be read leaves the records in the file and says why', async () => {
    const store = new FollowingOAuthStore(fileStore(), logger)
    await store.set('docs', { tokens: { access_token: 'kept', token_type: 'bearer' } })
    await store.use(memoryDatabase('connect ECONNREFUSED').database)
    expect(warnings).toEqual(['moving MCP OAuth records into the table %s failed (they stay in the file): %s dogu_mcp_oauth connect ECONNREFUSED'])
    expect((await store.get('docs'))?.tokens?.access_token).toBe('kept')
    expect(await inFile()).toEqual(['docs'])
  })
})
