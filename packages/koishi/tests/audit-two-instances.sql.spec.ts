// The SQL tier (docs/testing.md), for the audit trail: two bot processes, each a Koishi app
// with the MySQL driver and koishi-plugin-dogu, on one real MariaDB server this file starts
// for itself (test-support/mariadb.ts), record their calls in one dogu_audit table at once.
// Where no server can start, the file has one test saying why, which passes, or fails with
// DOGU_REQUIRE_SQL=1 (CI). The instances are the ones two-instances.sql.spec.ts drives
// (sql-instance/instance.ts); what is in the table is read with the server's own client.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type MariaDBDatabase, runMariaDB, sqlTierDidNotRun } from '../../../test-support/mariadb'
import { bundleInstance, Instance, killAndCheck, waitFor } from './sql-instance/instance-process'
import type { InstanceConfig } from './sql-instance/protocol'

const TIMING = { grantSyncMs: 250, taskSyncMs: 200, leaseMs: 1_500, slowTimeoutMs: 300 }
/** Calls each instance makes, all at once. */
const CALLS = 40
const started = await runMariaDB()

if ('reason' in started) {
  sqlTierDidNotRun(started.reason)
} else {
  const server = started.server
  let dir: string
  let entry: string
  const instances: Instance[] = []

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-sql-audit-'))
    entry = await bundleInstance(dir)
  })

  afterEach(async () => {
    await killAndCheck(instances)
  })

  afterAll(async () => {
    await Promise.all(instances.splice(0).map((instance) => instance.kill()))
    await server.stop()
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  async function start(instanceId: string, database: MariaDBDatabase): Promise<Instance> {
    const config: InstanceConfig = { instanceId, dir: join(dir, `${database.database}-${instanceId}`), mysql: database, readyTimeoutMs: 20_000, ...TIMING }
    return Instance.start(entry, config, (spawned) => instances.push(spawned))
  }

  /** Rows of the audit table as the server's client prints them: one line each, columns tab-separated. */
  async function rows(database: MariaDBDatabase, columns: string): Promise<string[][]> {
    const text = await server.query(`SELECT ${columns} FROM \`${database.database}\`.dogu_audit ORDER BY seq`)
    return text.split('\n').filter(Boolean).map((line) => line.split('\t'))
  }

  describe(`MariaDB ${server.version.split('-')[0]}: two Koishi instances audit into one table`, { timeout: 120_000 }, () => {
    it('records every call of both instances, made at the same time, once each', async () => {
      const database = await server.createDatabase('dogu_audit_two')
      // One at a time: minato's MySQL driver creates its tables without checking again.
      const a = await start('a', database)
      const b = await start('b', database)
      const calls = (instance: Instance, user: string) => Array.from({ length: CALLS }, (_, n) => instance.call('task_status', user, { id: `task_${instance.name}_${n}` }))
      const results = await Promise.all([...calls(a, 'alice'), ...calls(b, 'bob')])
      expect(results.every((result) => result.status === 'ok' || result.status === 'error')).toBe(true)
      // Each writes its queue every 200 ms: wait until both have.
      await waitFor('both instances to write their records', async () => (await rows(database, 'id')).length >= 2 * CALLS)
      const table = await rows(database, "id, tool, userId, JSON_VALUE(record, '$.args.id')")
      expect(table).toHaveLength(2 * CALLS)
      expect(new Set(table.map(([id]) => id)).size).toBe(2 * CALLS)
      const called = (user: string) => table.filter((row) => row[2] === user).map((row) => row[3]).sort()
      const expected = (name: string) => Array.from({ length: CALLS }, (_, n) => `task_${name}_${n}`).sort()
      expect(called('alice')).toEqual(expected(a.name))
      expect(called('bob')).toEqual(expected(b.name))
      expect(table.every((row) => row[1] === 'task_status')).toBe(true)
      // A restart of one reads the table, the other's records too: nothing was kept only in memory.
      await a.stop()
      const again = await start('a', database)
      await again.call('task_status', 'carol', { id: 'task_after' })
      await waitFor('the restarted instance to write its record', async () => (await rows(database, 'id')).length === 2 * CALLS + 1)
      expect((await rows(database, 'userId')).at(-1)).toEqual(['carol'])
    })
  })
}
