// The pending stores of issue 46 (permissions.durable) against one contract: what they keep,
// the claim exactly one racing claimant wins, what they make of damaged data. Memory, the
// JSON file, and the minato table `dogu_pending` on Koishi's memory database and on SQLite
// (@minatojs/driver-sqlite, loaded from packages/koishi, where Koishi and its drivers are
// installed). The table on MariaDB is durable-permissions.sql.spec.ts; the engine on these
// stores is durable-permissions.spec.ts.
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { MinatoDatabase } from '../src/database/minato-database'
import { DatabasePendingStore, JsonFilePendingStore, MemoryPendingStore, PENDING_TABLE, type PendingRecord, type PendingStore } from '../src/permissions'
import { koishiDatabase } from './durable-permissions-support'

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'dogu-pending-'))
  cleanups.push(() => rm(dir, { recursive: true, force: true }))
  return dir
}

function record(id: string, over: Partial<PendingRecord> = {}): PendingRecord {
  return {
    id,
    callId: `call-${id}`,
    tool: 'save',
    args: { file: 'notes.txt', text: 'hello' },
    permission: { name: 'tool:save' },
    effect: 'write',
    summary: 'save(file=notes.txt, text=hello)',
    reason: 'no rule matches; write tools need approval by default',
    asked: { kind: 'default', effect: 'write' },
    session: { id: 'mock:c1', userId: 'u1', channelId: 'c1', platform: 'mock', authority: 1, host: { selfId: 'bot' } },
    approvers: { userId: 'u1', platform: 'mock', authority: 4 },
    createdAt: 1_000,
    expiresAt: Date.now() + 600_000,
    instance: 'a',
    ...over,
  }
}

/** Each store twice, as two instances (or a restarted one) see it: the same data. */
const stores: Record<string, () => Promise<{ one: PendingStore; two: PendingStore }>> = {
  memory: async () => {
    const store = new MemoryPendingStore()
    return { one: store, two: store }
  },
  'JSON file': async () => {
    const path = join(await tempDir(), 'pending.json')
    return { one: new JsonFilePendingStore(path), two: new JsonFilePendingStore(path) }
  },
  'minato memory': async () => {
    const { database, stop } = await koishiDatabase('memory')
    cleanups.push(stop)
    return { one: new DatabasePendingStore({ database }), two: new DatabasePendingStore({ database }) }
  },
  'minato SQLite': async () => {
    const { database, stop } = await koishiDatabase('sqlite', join(await tempDir(), 'koishi.db'))
    cleanups.push(stop)
    return { one: new DatabasePendingStore({ database }), two: new DatabasePendingStore({ database }) }
  },
}

describe.each(Object.keys(stores))('%s pending store', (name) => {
  it('keeps a request whole, replaces one of the same id, lists open ones oldest first and removes them', async () => {
    const { one, two } = await stores[name]()
    await one.put(record('r2', { createdAt: 2_000 }))
    await one.put(record('r1'))
    await one.put(record('r2', { createdAt: 2_000, summary: 'replaced' }))
    const loaded = await two.load()
    expect(loaded.bad).toEqual([])
    expect(loaded.records).toEqual([record('r1', { expiresAt: loaded.records[0].expiresAt }), record('r2', { createdAt: 2_000, summary: 'replaced', expiresAt: loaded.records[1].expiresAt })])
    expect(await two.get('r1')).toEqual(loaded.records[0])
    await two.remove('r1')
    await two.remove('r1')
    expect(await one.get('r1')).toBeUndefined()
    expect((await one.load()).records.map((r) => r.id)).toEqual(['r2'])
  })

  it('a claim is won once: a claimed request says by whom, is no longer loaded as open, and a gone one is not claimed', async () => {
    const { one, two } = await stores[name]()
    await one.put(record('r1'))
    expect(await one.claim('r1', 'a', 'mock:alice')).toBe(true)
    expect(await two.claim('r1', 'b', 'mock:bob')).toBe(false)
    expect(await two.get('r1')).toMatchObject({ id: 'r1', claimedBy: 'a', claimedFor: 'mock:alice' })
    expect((await two.load()).records).toEqual([])
    expect(await two.claim('nothing', 'b', 'mock:bob')).toBe(false)
  })

  it('two instances racing to claim the same request, 30 rounds: exactly one wins each time', async () => {
    const { one, two } = await stores[name]()
    const wins = { a: 0, b: 0 }
    for (let round = 0; round < 30; round++) {
      const id = `race-${round}`
      await one.put(record(id))
      const [a, b] = await Promise.all([one.claim(id, 'a', 'mock:alice'), two.claim(id, 'b', 'mock:bob')])
      expect([a, b].filter(Boolean)).toHaveLength(1)
      if (a) wins.a++
      else wins.b++
      expect(await one.get(id)).toMatchObject({ claimedBy: a ? 'a' : 'b' })
    }
    expect(wins.a + wins.b).toBe(30)
  })
})

describe('JSON file pending store', () => {
  it('writes the file atomically, readable by its owner only', async () => {
    const path = join(await tempDir(), 'data', 'pending.json')
    const store = new JsonFilePendingStore(path)
    await store.put(record('r1'))
    expect((await stat(path)).mode & 0o777).toBe(0o600)
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ version: 1, requests: [{ id: 'r1', tool: 'save' }] })
  })

  it('moves a file that is not JSON aside and reports it; none of it is asked again, and the next write starts a new file', async () => {
    const dir = await tempDir()
    const path = join(dir, 'pending.json')
    await writeFile(path, '{"version": 1, "requests": [')
    const store = new JsonFilePendingStore(path)
    const loaded = await store.load()
    expect(loaded.records).toEqual([])
    expect(loaded.bad).toEqual([{ why: expect.stringMatching(new RegExp(`^the pending store ${path} is corrupt: it is not valid JSON \\(.+\\); it was moved to ${path}\\.corrupt-\\d+ and none of its requests are asked again$`)) }])
    const moved = loaded.bad[0].why.match(/moved to (\S+) and/)![1]
    expect(await readFile(moved, 'utf8')).toBe('{"version": 1, "requests": [')
    await store.put(record('r1'))
    expect((await store.load()).records.map((r) => r.id)).toEqual(['r1'])
  })

  it('reports a request that does not read as one, with its id and session, and keeps the others', async () => {
    const path = join(await tempDir(), 'pending.json')
    const bad = { ...record('r2'), effect: 'launch' }
    await writeFile(path, JSON.stringify({ version: 1, requests: [record('r1'), bad, { tool: 'no id' }] }))
    const store = new JsonFilePendingStore(path)
    const loaded = await store.load()
    expect(loaded.records.map((r) => r.id)).toEqual(['r1'])
    expect(loaded.bad).toEqual([
      { id: 'r2', why: `requests[1] in ${path} has an unknown effect "launch"`, session: record('r2').session },
      { why: `requests[2] in ${path} has no "id" string` },
    ])
    // The entry without an id could not be removed by one: it went with the load.
    expect(JSON.parse(await readFile(path, 'utf8')).requests.map((entry: { id?: string }) => entry.id)).toEqual(['r1', 'r2'])
  })

  it('a record holding a value JSON cannot write fails its put, and the file is left as it was', async () => {
    const path = join(await tempDir(), 'pending.json')
    const store = new JsonFilePendingStore(path)
    await store.put(record('r1'))
    await expect(store.put(record('r2', { args: { size: 10n } }))).rejects.toThrow(/BigInt/)
    expect((await store.load()).records.map((r) => r.id)).toEqual(['r1'])
  })
})

describe('the dogu_pending table', () => {
  it('keeps the columns an operator reads, and reports a row whose record is damaged or is another row\'s', async () => {
    const { database, stop } = await koishiDatabase('sqlite', join(await tempDir(), 'koishi.db'))
    cleanups.push(stop)
    const store = new DatabasePendingStore({ database })
    await store.put(record('r1'))
    const [row] = await database.get(PENDING_TABLE, { id: 'r1' })
    expect(row).toMatchObject({ id: 'r1', tool: 'save', sessionId: 'mock:c1', instance: 'a', claimedBy: '', claimedFor: '' })
    expect(JSON.parse(row.record as string)).toEqual(record('r1', { expiresAt: row.expiresAt as number }))
    await database.upsert(PENDING_TABLE, [{ id: 'r2', tool: 'save', sessionId: 'mock:c2', instance: 'a', claimedBy: '', claimedFor: '', expiresAt: 0, record: '{"id": "r2", ' }])
    await database.upsert(PENDING_TABLE, [{ id: 'r3', tool: 'save', sessionId: 'mock:c1', instance: 'a', claimedBy: '', claimedFor: '', expiresAt: 0, record: JSON.stringify(record('r1')) }])
    const loaded = await store.load()
    expect(loaded.records.map((r) => r.id)).toEqual(['r1'])
    expect(loaded.bad).toEqual([
      { id: 'r2', why: expect.stringMatching(/^row "r2" of dogu_pending is not valid JSON/), session: { id: 'mock:c2' } },
      { id: 'r3', why: 'row "r3" of dogu_pending holds request "r1" under another id', session: record('r1').session },
    ])
  })

  it('a claimed row whose expiry passed a minute ago is removed at load (its claimant stopped before removing it)', async () => {
    const { database, stop } = await koishiDatabase('memory')
    cleanups.push(stop)
    const store = new DatabasePendingStore({ database })
    await store.put(record('old', { expiresAt: Date.now() - 61_000 }))
    await store.put(record('recent', { expiresAt: Date.now() - 1_000 }))
    await store.claim('old', 'a', 'mock:alice')
    await store.claim('recent', 'a', 'mock:alice')
    await store.load()
    expect((await database.get(PENDING_TABLE, {})).map((row) => row.id)).toEqual(['recent'])
  })

  it('once detached (its database stopped), writes are dropped and reads and claims fail, saying why', async () => {
    const database: MinatoDatabase = {
      extend() {},
      get: async () => { throw new Error('the driver stopped') },
      set: async () => { throw new Error('the driver stopped') },
      upsert: async () => { throw new Error('the driver stopped') },
      remove: async () => { throw new Error('the driver stopped') },
    }
    const store = new DatabasePendingStore({ database })
    store.detach('the database stopped')
    expect(store.gone).toBe('the database stopped')
    await expect(store.put(record('r1'))).rejects.toThrow('the table dogu_pending cannot be written: the database stopped')
    await expect(store.remove('r1')).resolves.toBeUndefined()
    await expect(store.claim('r1', 'a', 'x')).rejects.toThrow('the database stopped')
    await expect(store.load()).rejects.toThrow('the table dogu_pending cannot be read: the database stopped')
  })

  it('refuses a claim on a database that does not say what its update matched', async () => {
    const rows: Record<string, unknown>[] = []
    const database: MinatoDatabase = {
      extend() {},
      get: async () => rows,
      set: async () => ({}),
      upsert: async (_, added) => { rows.push(...added) },
      remove: async () => ({}),
    }
    const store = new DatabasePendingStore({ database })
    await store.put(record('r1'))
    await expect(store.claim('r1', 'a', 'x')).rejects.toThrow('the database did not say whether claiming a row of dogu_pending matched it, so a request cannot be claimed in it')
  })
})
