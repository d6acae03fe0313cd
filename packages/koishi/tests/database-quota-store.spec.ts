// DatabaseQuotaStore (@dogu/core) on real minato drivers: Koishi's in-memory database and
// SQLite (@minatojs/driver-sqlite). Two instances on MariaDB are quotas-two-instances.sql.spec.ts;
// the statements the store sends, and a database that fails, are packages/core/tests/database-quota-store.spec.ts.
import { join } from 'node:path'
import { format } from 'node:util'
import { DatabaseQuotaStore, defineTool, type MinatoDatabase, QUOTA_TABLE, type QuotaSlot } from '@dogu/core'
import SQLite from '@minatojs/driver-sqlite'
import { App, type Context, Schema } from 'koishi'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { koishiApp, settle } from './koishi-app'

const apps: App[] = []
afterEach(async () => {
  vi.useRealTimers()
  for (const app of apps.splice(0).reverse()) await app.stop()
})

const debug: string[] = []
const warnings: string[] = []
const logger = {
  debug: (fmt: string, ...args: unknown[]) => { debug.push(format(fmt, ...args)) },
  warn: (fmt: string, ...args: unknown[]) => { warnings.push(format(fmt, ...args)) },
}
beforeEach(() => {
  debug.length = 0
  warnings.length = 0
})

const HOUR = 3_600_000
const START = Date.now() - (Date.now() % HOUR)
function slot(subject: string, max: number, start = START, quota = 'probe per user'): QuotaSlot {
  return { key: `${quota}\u0000${subject}\u0000${start}`, quota, subject, start, end: start + HOUR, max }
}

/** Each call gives another of minato's per-context proxies of the one database, as two plugins would see it. */
const drivers: Record<string, () => Promise<() => MinatoDatabase>> = {
  memory: async () => {
    const { app } = await koishiApp({ database: true, dogu: false })
    return () => app.get('database') as unknown as MinatoDatabase
  },
  sqlite: async () => {
    const { dir } = await koishiApp({ dogu: false })
    const app = new App()
    apps.push(app)
    guardLogs(app)
    app.plugin(SQLite as never, { path: join(dir, 'koishi.db') })
    await app.start()
    await settle(app)
    return () => app.get('database') as unknown as MinatoDatabase
  },
}

/** The table's rows, by subject, without the key. */
async function table(database: MinatoDatabase) {
  const rows = await database.get(QUOTA_TABLE, {})
  return Object.fromEntries(rows.map(({ key, subject, ...row }) => {
    expect(key).toMatch(/^sha256:[0-9a-f]{64}$/)
    return [subject, row]
  }))
}

for (const [driver, make] of Object.entries(drivers)) {
  describe(`DatabaseQuotaStore on ${driver}`, () => {
    it('gives exactly max units to takes at once through two stores: on a new window, and on a row that exists', async () => {
      const database = await make()
      const [one, two] = [new DatabaseQuotaStore({ database: database(), logger }), new DatabaseQuotaStore({ database: database(), logger })]
      const takes = (subject: string, max: number, count: number) => Promise.all(Array.from({ length: count }, (_, i) => (i % 2 ? one : two).take(slot(subject, max))))
      // The row of one is made by the burst; the other's exists (the driver's update is then all there is).
      expect(await one.take(slot('user:mock:alice', 10))).toBe(true)
      const [global, alice] = await Promise.all([takes('global', 40, 100), takes('user:mock:alice', 10, 40)])
      expect(global.filter(Boolean)).toHaveLength(40)
      expect(alice.filter(Boolean)).toHaveLength(9)
      expect(await two.used([slot('global', 40), slot('user:mock:alice', 10)])).toEqual([40, 10])
      expect(await table(database())).toEqual({
        global: { quota: 'probe per user', start: START, end: START + HOUR, count: 40 },
        'user:mock:alice': { quota: 'probe per user', start: START, end: START + HOUR, count: 10 },
      })
      // Used up for both stores, and the next window starts from 0.
      expect(await one.take(slot('global', 40))).toBe(false)
      expect(await two.take(slot('global', 40, START + HOUR))).toBe(true)
      expect(warnings).toEqual([])
    })

    it('gives units back, never below 0, also while others take', async () => {
      const database = await make()
      const [one, two] = [new DatabaseQuotaStore({ database: database(), logger }), new DatabaseQuotaStore({ database: database(), logger })]
      const alice = slot('user:mock:alice', 5)
      for (let i = 0; i < 5; i++) expect(await one.take(alice)).toBe(true)
      expect(await two.take(alice)).toBe(false)
      await two.give(alice)
      expect(await one.used([alice])).toEqual([4])
      // Three given back and eight takes at once: three of them get a unit.
      const burst = await Promise.all([...Array.from({ length: 3 }, () => one.give(alice)), ...Array.from({ length: 8 }, (_, i) => (i % 2 ? one : two).take(alice))])
      expect(burst.filter((value) => value === true)).toHaveLength(4)
      expect(await two.used([alice])).toEqual([5])
      for (let i = 0; i < 8; i++) await (i % 2 ? one : two).give(alice)
      expect(await one.used([alice])).toEqual([0])
      // Nothing to give back on a window nobody used: no row appears.
      await one.give(slot('user:mock:bob', 5))
      expect(Object.keys(await table(database()))).toEqual(['user:mock:alice'])
    })

    it('reads several slots in one query, 0 for a window nobody used', async () => {
      const database = await make()
      const store = new DatabaseQuotaStore({ database: database(), logger })
      await store.take(slot('user:mock:alice', 3))
      await store.take(slot('user:mock:alice', 3))
      await store.take(slot('channel:mock:room', 3))
      const reader = database()
      const get = vi.spyOn(reader, 'get')
      const used = await new DatabaseQuotaStore({ database: reader, logger }).used([slot('user:mock:alice', 3), slot('user:mock:bob', 3), slot('channel:mock:room', 3), slot('user:mock:alice', 3, START - HOUR)])
      expect(used).toEqual([2, 0, 1, 0])
      expect(get).toHaveBeenCalledTimes(1)
    })

    it('adds carried counts, making the row, past max', async () => {
      const database = await make()
      const store = new DatabaseQuotaStore({ database: database(), logger })
      await store.add(slot('user:mock:alice', 3), 2)
      await store.add(slot('user:mock:alice', 3), 2)
      expect(await store.used([slot('user:mock:alice', 3)])).toEqual([4])
      expect(await store.take(slot('user:mock:alice', 3))).toBe(false)
      await store.add(slot('user:mock:bob', 3), 1)
      expect(await new DatabaseQuotaStore({ database: database(), logger }).take(slot('user:mock:bob', 3))).toBe(true)
      expect(await table(database())).toEqual({
        'user:mock:alice': { quota: 'probe per user', start: START, end: START + HOUR, count: 4 },
        'user:mock:bob': { quota: 'probe per user', start: START, end: START + HOUR, count: 2 },
      })
    })

    it('deletes windows that ended over a minute ago, from the first take on, and keeps the others', async () => {
      const database = await make()
      const store = new DatabaseQuotaStore({ database: database(), logger })
      const old = slot('user:mock:alice', 3, START - 3 * HOUR)
      // Ended 10 s ago: another instance's clock may still be in it.
      const justEnded = { ...slot('user:mock:alice', 3, START - HOUR), end: Date.now() - 10_000 }
      await store.add(old, 1)
      await store.add(justEnded, 1)
      expect(await store.take(slot('user:mock:alice', 3))).toBe(true)
      await vi.waitFor(async () => expect(await store.used([old])).toEqual([0]))
      expect(await store.used([justEnded, slot('user:mock:alice', 3)])).toEqual([1, 1])
      expect((await database().get(QUOTA_TABLE, {})).map((row) => row.start).sort()).toEqual([START - HOUR, START])
      // Within the minute, a take starts no other sweep; `sweep` runs one at once.
      const remove = vi.spyOn(database(), 'remove')
      await store.add(old, 1)
      await store.take(slot('user:mock:alice', 3))
      expect(remove).not.toHaveBeenCalled()
      expect(await store.sweep(justEnded.end + 60_001)).toBe(2)
      expect((await database().get(QUOTA_TABLE, {})).map((row) => row.start)).toEqual([START])
    })
  })
}

describe('koishi-plugin-dogu counts quotas in the database', () => {
  it('with tools.quotas on Koishi\'s database: the third call is rate_limited, the count is in dogu_quota, and a failing database fails the call closed', async () => {
    const { app, guard } = await koishiApp({ database: true, dogu: { tools: { quotas: [{ tools: 'probe', per: 'user', max: 2, window: '1h', name: 'probes' }] } } })
    let runs = 0
    app.plugin({
      name: 'probe-tool',
      inject: ['tools'],
      apply(ctx: Context) {
        ctx.tools.define(defineTool({ name: 'probe', description: 'Probe', args: Schema.object({}), traits: { effect: 'read' }, run: () => `run ${++runs}` }))
      },
    })
    await settle(app)
    expect(app.tools.registry.quotas.store).toBeInstanceOf(DatabaseQuotaStore)
    const session = { id: 'mock:room', platform: 'mock', channelId: 'room', userId: 'alice' }
    let n = 0
    const call = async () => (await app.tools.execute([{ id: `c${++n}`, name: 'probe', arguments: {} }], { session }))[0]
    expect(await call()).toMatchObject({ status: 'ok', content: 'run 1' })
    expect(await call()).toMatchObject({ status: 'ok', content: 'run 2' })
    const refused = await call()
    expect(refused).toMatchObject({ status: 'rate_limited', code: 'rate_limited' })
    expect(refused.retryAfterMs).toBeGreaterThan(0)
    const database = app.get('database') as unknown as MinatoDatabase
    const [row] = await database.get(QUOTA_TABLE, {})
    expect(row).toMatchObject({ quota: 'probes', subject: 'user:mock:alice', count: 2 })
    expect(await app.tools.registry.quotas.status(session)).toMatchObject([{ name: 'probes', used: 2, remaining: 0 }])
    // The database fails: the call does not run, and the warning says why.
    const set = vi.spyOn(database, 'set').mockRejectedValue(new Error('connection lost'))
    guard.expect(/the quota count of probe \(c4\) failed, so it did not run: connection lost/)
    expect(await call()).toMatchObject({ status: 'error', code: 'quota_unavailable' })
    set.mockRestore()
    expect(runs).toBe(2)
  })
})
