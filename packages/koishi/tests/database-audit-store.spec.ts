// DatabaseAuditStore (@dogu/core) on real minato drivers: Koishi's in-memory database and
// SQLite (@minatojs/driver-sqlite). The core package has no minato of its own; its database
// stores are tested here, as database-stores.spec.ts does for grants and tasks.
import { join } from 'node:path'
import { format } from 'node:util'
import { AUDIT_TABLE, AuditLog, type AuditRecord, DatabaseAuditStore, defineTool, type MinatoDatabase, PermissionEngine, ToolRegistry } from '@dogu/core'
import SQLite from '@minatojs/driver-sqlite'
import { App, Logger } from 'koishi'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { guardLogs, logGuard } from '../../../test-support/log-guard'
import { koishiApp, settle } from './koishi-app'

const apps: App[] = []
afterEach(async () => {
  for (const app of apps.splice(0).reverse()) await app.stop()
})

/** Debug lines of the stores' logger, which the log guard does not see. */
const debug: string[] = []
const logger = {
  debug: (fmt: string, ...args: unknown[]) => { debug.push(format(fmt, ...args)) },
  warn: (fmt: string, ...args: unknown[]) => { new Logger('dogu').warn(fmt, ...args) },
}
beforeEach(() => { debug.length = 0 })

/** A record of call `n` at `at`, by `user` (on discord) with `tool` and `outcome`. */
function record(n: number, overrides: Partial<AuditRecord> & { user?: string } = {}): AuditRecord {
  const { user = 'alice', ...rest } = overrides
  return {
    id: `aud_test_${n}`,
    at: 1_000_000 + n * 1000,
    endedAt: 1_000_000 + n * 1000 + 5,
    tool: 'save',
    callId: `c${n}`,
    args: { note: `note ${n}`, nested: { list: [1, 2, 3] } },
    caller: { sessionId: `discord:room`, platform: 'discord', userId: user, channelId: 'room', authority: 1 },
    decided: { kind: 'rule', id: 'r1', origin: 'config', decision: 'ask', permission: 'tool:save', name: 'saves' },
    ask: { requestId: `req${n}`, ended: 'answer', decision: 'allow', by: { id: 'bob', platform: 'discord' }, via: 'button', scope: 'once' },
    outcome: 'ok',
    durationMs: 5,
    waitMs: 1200,
    ...rest,
  }
}

const ids = (records: AuditRecord[]) => records.map((r) => r.id)

async function sqlite() {
  const { dir } = await koishiApp({ dogu: false })
  const open = async () => {
    const app = new App()
    apps.push(app)
    guardLogs(app)
    app.plugin(SQLite as never, { path: join(dir, 'koishi.db') })
    await app.start()
    await settle(app)
    return app.get('database') as unknown as MinatoDatabase
  }
  return { dir, open }
}

const drivers = {
  memory: async () => {
    const { app } = await koishiApp({ database: true, dogu: false })
    const database = app.get('database') as unknown as MinatoDatabase
    return { open: async () => database }
  },
  sqlite,
}

for (const [driver, make] of Object.entries(drivers)) {
  describe(`DatabaseAuditStore on ${driver}`, () => {
    it('keeps every field of a record and queries with the filter pushed into the database, newest first', async () => {
      const database = await (await make()).open()
      const store = new DatabaseAuditStore({ database, logger })
      await store.open()
      const records = [
        record(1),
        record(2, { user: 'bob', tool: 'deploy', outcome: 'denied', reason: 'no', code: 'permission_denied' }),
        record(3, { caller: { sessionId: 'telegram:7', platform: 'telegram', userId: 'alice' }, outcome: 'error' }),
        record(4, { argsHash: 'sha256:abc', args: undefined, decided: { kind: 'default', effect: 'write' }, ask: undefined, waitMs: undefined }),
        record(5, { caller: { sessionId: 'cli' }, decided: undefined, ask: undefined, outcome: 'background', taskId: 'task_1' }),
      ]
      for (const r of records) if (r.args === undefined) delete r.args
      await store.append(records.slice(0, 3))
      await store.append(records.slice(3))
      const get = vi.spyOn(database, 'get')
      expect(await store.query({})).toEqual([...records].reverse().map((r) => JSON.parse(JSON.stringify(r))))
      expect(ids(await store.query({ user: 'alice' }))).toEqual(['aud_test_4', 'aud_test_3', 'aud_test_1'])
      expect(ids(await store.query({ user: 'discord:alice' }))).toEqual(['aud_test_4', 'aud_test_1'])
      expect(ids(await store.query({ user: 'telegram:alice' }))).toEqual(['aud_test_3'])
      expect(ids(await store.query({ tool: 'deploy' }))).toEqual(['aud_test_2'])
      expect(ids(await store.query({ outcome: ['denied', 'error'] }))).toEqual(['aud_test_3', 'aud_test_2'])
      expect(ids(await store.query({ outcome: [] }))).toEqual([])
      expect(ids(await store.query({ sessionId: 'cli' }))).toEqual(['aud_test_5'])
      expect(ids(await store.query({ since: record(2).at, until: record(4).at }))).toEqual(['aud_test_3', 'aud_test_2'])
      expect(ids(await store.query({ limit: 2 }))).toEqual(['aud_test_5', 'aud_test_4'])
      // What reached the database: the filter, the order and the limit, not "everything".
      expect(get).toHaveBeenCalledWith(AUDIT_TABLE, { tool: 'deploy' }, { sort: { seq: 'desc' } })
      expect(get).toHaveBeenCalledWith(AUDIT_TABLE, {}, { sort: { seq: 'desc' }, limit: 2 })
      expect(get).toHaveBeenCalledWith(AUDIT_TABLE, { $or: [{ userId: 'discord:alice' }, { platform: 'discord', userId: 'alice' }] }, { sort: { seq: 'desc' } })
      expect(get).toHaveBeenCalledWith(AUDIT_TABLE, { at: { $gte: record(2).at, $lt: record(4).at } }, expect.anything())
    })

    it('prunes by age and to the newest maxRecords', async () => {
      const database = await (await make()).open()
      const store = new DatabaseAuditStore({ database, logger })
      await store.open()
      for (let n = 1; n <= 10; n++) await store.append([record(n)])
      // Records 1 and 2 are older than 8.5 s at 11 s.
      expect(await store.prune({ maxRecords: 100, maxAgeMs: 8_500 }, record(11).at)).toBe(2)
      expect(ids(await store.query({}))).toEqual([10, 9, 8, 7, 6, 5, 4, 3].map((n) => `aud_test_${n}`))
      await store.prune({ maxRecords: 3, maxAgeMs: 1e12 }, record(11).at)
      expect(ids(await store.query({}))).toEqual(['aud_test_10', 'aud_test_9', 'aud_test_8'])
    })

    it('prunes the early records (calls nobody authorized) first, wherever they are, and the others only once none is left', async () => {
      const database = await (await make()).open()
      const store = new DatabaseAuditStore({ database, logger })
      await store.open()
      const early = new Set([2, 3, 4, 5, 6, 7])
      for (let n = 1; n <= 10; n++) await store.append([record(n, early.has(n) ? { early: true, code: 'unknown_tool', outcome: 'error', decided: undefined, ask: undefined } : {})])
      expect(await store.prune({ maxRecords: 5, maxAgeMs: 1e12 }, record(11).at)).toBe(5)
      expect(ids(await store.query({}))).toEqual([10, 9, 8, 7, 1].map((n) => `aud_test_${n}`))
      expect(await store.prune({ maxRecords: 3, maxAgeMs: 1e12 }, record(11).at)).toBe(2)
      expect(ids(await store.query({}))).toEqual(['aud_test_10', 'aud_test_9', 'aud_test_8'])
      // The mark is a column of its own, never read from the record's text.
      expect((await database.get(AUDIT_TABLE, {})).map((row) => row.early)).toEqual([false, false, false])
    })

    it('keeps an approved deploy\'s record through 120 calls to unknown tools written one by one (issue 43)', async () => {
      const database = await (await make()).open()
      const log = new AuditLog({ store: new DatabaseAuditStore({ database, logger }), maxRecords: 20 })
      const engine = new PermissionEngine({ onDecision: (event) => log.onDecision(event) })
      const registry = new ToolRegistry({ emit: (name, ...args: any[]) => { if (name === 'tools/call-end') log.onCallEnd(args[0], args[1]) } })
      registry.permissions = engine
      registry.define(defineTool({ name: 'deploy', description: 'Deploy', traits: { effect: 'exec' }, run: () => 'deployed' }))
      engine.addAsker(() => ({ decision: 'allow', by: { id: 'bob', platform: 'discord', authority: 4 }, via: 'button' }))
      const toolset = registry.toolset({ session: { id: 'discord:room', platform: 'discord', userId: 'alice' } })
      expect((await toolset.execute([{ id: 'd1', name: 'deploy', arguments: {} }]))[0].status).toBe('ok')
      await log.flush()
      for (let i = 0; i < 120; i++) {
        await toolset.execute([{ id: `u${i}`, name: `nope_${i}`, arguments: {} }])
        await log.flush()
      }
      // One batch of 120 is one record with its count.
      await toolset.execute(Array.from({ length: 120 }, (_, i) => ({ id: `v${i}`, name: `gone_${i}`, arguments: {} })))
      const records = await log.query()
      expect(records.find((r) => r.callId === 'd1')).toMatchObject({ tool: 'deploy', decided: { kind: 'default', effect: 'exec' }, ask: { decision: 'allow', via: 'button' } })
      expect(records[0]).toMatchObject({ tool: 'gone_0', early: true, count: 120, code: 'unknown_tool' })
      await log.stop()
    })

    it('two stores on one database append and prune at once and lose no record they should keep', async () => {
      const { open } = await make()
      const [one, two] = [new DatabaseAuditStore({ database: await open(), logger }), new DatabaseAuditStore({ database: await open(), logger })]
      await one.open()
      await two.open()
      const batch = (from: number) => Array.from({ length: 20 }, (_, i) => record(from + i))
      await Promise.all([one.append(batch(0)), two.append(batch(100)), one.append(batch(200)), two.append(batch(300))])
      expect((await one.query({})).length).toBe(80)
      expect((await two.query({ limit: 1000 })).length).toBe(80)
      // Both prune to 50 while both append: 50 kept, plus what came in meanwhile.
      await Promise.all([
        one.prune({ maxRecords: 50, maxAgeMs: 1e12 }, 2e6),
        two.prune({ maxRecords: 50, maxAgeMs: 1e12 }, 2e6),
      ])
      const kept = await one.query({})
      expect(kept.length).toBe(50)
      // The in-memory driver's upsert yields between rows and a remove meanwhile replaces
      // its table: a row can vanish there. An append racing a prune is a SQL driver's case.
      if (driver === 'memory') return
      // Later than every row (rows of one millisecond from two instances have no order).
      await new Promise((resolve) => setTimeout(resolve, 5))
      await Promise.all([one.append(batch(400)), two.prune({ maxRecords: 50, maxAgeMs: 1e12 }, 2e6), one.prune({ maxRecords: 50, maxAgeMs: 1e12 }, 2e6)])
      const after = ids(await two.query({}))
      // The newest 50 are there, whichever prune read before the append: all of the new batch among them.
      expect(after.length).toBeGreaterThanOrEqual(50)
      expect(after.slice(0, 20).sort()).toEqual(ids(batch(400)).sort())
      expect(after.slice(20, 50)).toEqual(ids(kept.slice(0, 30)))
    })

    it('after detach drops writes with a debug line, and queries fail saying why', async () => {
      const database = await (await make()).open()
      const store = new DatabaseAuditStore({ database, logger })
      await store.open()
      await store.append([record(1)])
      store.detach('the database stopped before Dogu did')
      await expect(store.append([record(2)])).resolves.toBeUndefined()
      expect(await store.prune({ maxRecords: 1, maxAgeMs: 1 })).toBe(0)
      await expect(store.query({})).rejects.toThrow('the audit table dogu_audit cannot be read: the database stopped before Dogu did')
      expect(debug).toEqual(['1 audit record(s) not written to the table dogu_audit: the database stopped before Dogu did'])
      expect(store.gone).toBe('the database stopped before Dogu did')
      const rows = await database.get(AUDIT_TABLE, {})
      expect(rows.map((row) => row.id)).toEqual(['aud_test_1'])
    })

    it('leaves out a malformed row, reporting it once', async () => {
      const database = await (await make()).open()
      const store = new DatabaseAuditStore({ database, logger })
      await store.open()
      await store.append([record(1), record(2)])
      await database.set(AUDIT_TABLE, { id: 'aud_test_1' }, { record: '{"torn' })
      const malformed = /the audit table dogu_audit has a malformed row, kept and left out: row "aud_test_1" is not valid JSON/
      logGuard.expect(malformed)
      expect(ids(await store.query({}))).toEqual(['aud_test_2'])
      expect(ids(await store.query({}))).toEqual(['aud_test_2'])
      expect(logGuard.lines.filter((line) => malformed.test(line.message))).toHaveLength(1)
      expect((await database.get(AUDIT_TABLE, {})).length).toBe(2)
    })
  })
}
