// The SQL tier (docs/testing.md), for quotas: two bot processes, each a Koishi app with the
// MySQL driver and koishi-plugin-dogu with one global quota, on one real MariaDB server this
// file starts for itself (test-support/mariadb.ts), count in one dogu_quota table. Where no
// server can start, the file has one test saying why, which passes, or fails with
// DOGU_REQUIRE_SQL=1 (CI). The instances are the ones two-instances.sql.spec.ts drives
// (sql-instance/instance.ts); what is in the table is read with the server's own client.
// The store itself (take, give, used, add, sweep) also runs here in this process, on the
// MySQL driver, where memory and SQLite are database-quota-store.spec.ts.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseQuotaStore, type MinatoDatabase, QUOTA_TABLE, type QuotaRule, type QuotaSlot } from '@dogu/core'
import MySQL from '@koishijs/plugin-database-mysql'
import { App } from 'koishi'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { type MariaDBDatabase, runMariaDB, sqlTierDidNotRun } from '../../../test-support/mariadb'
import { bundleInstance, Instance, killAndCheck, waitFor } from './sql-instance/instance-process'
import { patchIndexes } from './sql-instance/mysql-indexes'
import type { InstanceConfig } from './sql-instance/protocol'

const fileStarted = performance.now()
// This file shares no grants or tasks between the instances: their polls are a minute apart, so
// none is under way when an instance stops (a query in flight as the MySQL driver stops fails
// inside the driver, which logs it as a warning; seen under load with 200 ms polls).
const TIMING = { grantSyncMs: 60_000, taskSyncMs: 60_000, leaseMs: 1_500, slowTimeoutMs: 300 }
const HOUR = 3_600_000
const QUOTAS: QuotaRule[] = [{ tools: 'probe', per: 'global', max: 60, window: '1h', name: 'probes' }]
/** Calls each instance makes, all at once. */
const CALLS = 50
const started = await runMariaDB()

/**
 * Windows are fixed hours since the epoch: calls on both sides of an hour would count in two
 * windows. Close to the end of one, this waits for the next.
 */
async function clearOfWindowEnd() {
  const left = HOUR - (Date.now() % HOUR)
  if (left < 30_000) await new Promise((resolve) => setTimeout(resolve, left + 100))
}

if ('reason' in started) {
  sqlTierDidNotRun(started.reason)
} else {
  const server = started.server
  let dir: string
  let entry: string
  const instances: Instance[] = []
  const apps: App[] = []
  const measured: { burstMs?: number } = {}

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-sql-quota-'))
    entry = await bundleInstance(dir)
  })

  afterEach(async () => {
    for (const app of apps.splice(0).reverse()) await app.stop()
    await killAndCheck(instances)
  })

  afterAll(async () => {
    await Promise.all(instances.splice(0).map((instance) => instance.kill()))
    await server.stop()
    if (dir) await rm(dir, { recursive: true, force: true })
    const ms = (value?: number) => value === undefined ? 'not measured' : `${Math.round(value)} ms`
    console.log(`sql tier: quotas-two-instances.sql.spec.ts took ${((performance.now() - fileStarted) / 1000).toFixed(2)} s (mariadbd ${server.version}); 2 × ${CALLS} calls against max ${QUOTAS[0].max} ended in ${ms(measured.burstMs)}`)
  })

  async function start(instanceId: string, database: MariaDBDatabase): Promise<Instance> {
    const config: InstanceConfig = { instanceId, dir: join(dir, `${database.database}-${instanceId}`), mysql: database, readyTimeoutMs: 20_000, quotas: QUOTAS, ...TIMING }
    return Instance.start(entry, config, (spawned) => instances.push(spawned))
  }

  /** A Koishi app in this process on `database`, with the MySQL driver (its own connection pool). */
  async function connect(database: MariaDBDatabase): Promise<() => MinatoDatabase> {
    const app = new App()
    apps.push(app)
    guardLogs(app)
    const driver = (MySQL as unknown as { default?: typeof MySQL }).default ?? MySQL
    patchIndexes(driver as never)
    app.plugin(driver as never, { ...database })
    await app.start()
    for (let i = 0; i < 500 && !app.get('database'); i++) await new Promise((resolve) => setTimeout(resolve, 20))
    const get = () => app.get('database') as unknown as MinatoDatabase
    if (!app.get('database')) throw new Error('the MySQL driver did not connect within 10 s')
    return get
  }

  /** Rows of the quota table as the server's client prints them: one line each, columns tab-separated. */
  async function rows(database: MariaDBDatabase, columns: string, where = ''): Promise<string[][]> {
    const text = await server.query(`SELECT ${columns} FROM \`${database.database}\`.${QUOTA_TABLE} ${where} ORDER BY start, CAST(subject AS BINARY)`)
    return text.split('\n').filter(Boolean).map((line) => line.split('\t'))
  }

  describe(`MariaDB ${server.version.split('-')[0]}: two Koishi instances share one quota`, { timeout: 120_000 }, () => {
    it(`2 × ${CALLS} calls at once against max 60 on one global quota: exactly 60 run, 40 are rate_limited`, async () => {
      const database = await server.createDatabase('dogu_quota_two')
      // One at a time: minato's MySQL driver creates its tables without checking again.
      const a = await start('a', database)
      const b = await start('b', database)
      await clearOfWindowEnd()
      const calls = (instance: Instance, user: string) => Array.from({ length: CALLS }, () => instance.call('probe', user))
      const burst = performance.now()
      const results = await Promise.all([...calls(a, 'alice'), ...calls(b, 'bob')])
      measured.burstMs = performance.now() - burst
      const ok = results.filter((result) => result.status === 'ok')
      const limited = results.filter((result) => result.status === 'rate_limited')
      expect(ok).toHaveLength(60)
      expect(limited).toHaveLength(40)
      for (const result of limited) {
        expect(result.code).toBe('rate_limited')
        expect(result.retryAfterMs).toBeGreaterThan(0)
        expect(result.retryAfterMs).toBeLessThanOrEqual(HOUR)
        expect(result.content).toMatch(/^Rate limited: quota 'probes' used: 60 per 1 h; try again in \d+ (min|s|h)\.$/)
      }
      // The tool's own count: 60 runs, over both processes.
      const [runsOnA, runsOnB] = [await a.probes(), await b.probes()]
      expect(runsOnA + runsOnB).toBe(60)
      expect(runsOnA).toBeGreaterThan(0)
      expect(runsOnB).toBeGreaterThan(0)
      expect(ok.map((result) => result.content).sort()).toEqual([
        ...Array.from({ length: runsOnA }, (_, n) => `probe ${n + 1}`),
        ...Array.from({ length: runsOnB }, (_, n) => `probe ${n + 1}`),
      ].sort())
      // One row, as the server's own client reads it.
      expect(await rows(database, 'quota, subject, `count`, `end` - start, `key` REGEXP \'^sha256:[0-9a-f]{64}$\'')).toEqual([['probes', 'global', '60', String(HOUR), '1']])
      expect(await b.quota('carol')).toEqual([expect.objectContaining({ name: 'probes', per: 'global', max: 60, used: 60, remaining: 0 })])
      // The count lives in the table: a restarted instance is still over the quota. Stopped
      // once its audit records are written (every 200 ms): a write under way as the MySQL
      // driver stops first fails inside the driver, which logs it as a warning.
      await waitFor('both instances to write their audit records', async () => Number(await server.query(`SELECT COUNT(*) FROM \`${database.database}\`.dogu_audit`)) >= 2 * CALLS)
      await a.stop()
      const again = await start('a', database)
      expect(await again.call('probe', 'carol')).toMatchObject({ status: 'rate_limited', code: 'rate_limited' })
      expect(await again.probes()).toBe(0)
    })
  })

  describe(`MariaDB ${server.version.split('-')[0]}: DatabaseQuotaStore on the MySQL driver`, { timeout: 60_000 }, () => {
    let start = 0
    const slot = (subject: string, max: number, from = start): QuotaSlot => ({ key: `probes\u0000${subject}\u0000${from}`, quota: 'probes', subject, start: from, end: from + HOUR, max })

    it('takes, gives back (never below 0), reads several slots at once, adds carried counts and deletes ended windows, through two connection pools', async () => {
      const database = await server.createDatabase('dogu_quota_store')
      const first = await connect(database)
      const one = new DatabaseQuotaStore({ database: first() })
      await (first() as unknown as { prepared(): Promise<void> }).prepared()
      const second = await connect(database)
      const two = new DatabaseQuotaStore({ database: second() })
      await clearOfWindowEnd()
      start = Date.now() - (Date.now() % HOUR)

      const takes = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? one : two).take(slot('user:mock:alice', 12))))
      expect(takes.filter(Boolean)).toHaveLength(12)
      // Subjects that differ only in case are two counts, though MySQL's collation calls them equal.
      expect(await one.take(slot('user:mock:Alice', 12))).toBe(true)
      expect(await two.used([slot('user:mock:alice', 12), slot('user:mock:Alice', 12), slot('user:mock:bob', 12)])).toEqual([12, 1, 0])

      for (let i = 0; i < 3; i++) await one.give(slot('user:mock:Alice', 12))
      expect(await two.used([slot('user:mock:Alice', 12)])).toEqual([0])
      await two.give(slot('user:mock:alice', 12))
      expect(await one.take(slot('user:mock:alice', 12))).toBe(true)
      expect(await two.take(slot('user:mock:alice', 12))).toBe(false)

      await one.add(slot('channel:mock:room', 5), 7)
      await two.add(slot('channel:mock:room', 5), 1)
      expect(await two.take(slot('channel:mock:room', 5))).toBe(false)
      expect(await one.used([slot('channel:mock:room', 5)])).toEqual([8])

      // A window that ended hours ago goes at the next sweep; the current ones stay.
      await one.add(slot('user:mock:alice', 12, start - 3 * HOUR), 2)
      expect(await two.sweep()).toBe(1)
      expect(await rows(database, 'subject, `count`')).toEqual([['channel:mock:room', '8'], ['user:mock:Alice', '0'], ['user:mock:alice', '12']])
    })
  })
}
