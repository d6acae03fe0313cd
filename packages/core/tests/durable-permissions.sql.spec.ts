// The SQL tier (docs/testing.md), for durable permission requests: the minato table
// `dogu_pending` on a real MariaDB server this file starts for itself (test-support/mariadb.ts),
// reached by two Koishi apps with the MySQL driver, each its own connection pool, as two
// instances are. Their claims race in the server, not in this process: the store queues
// writes per database object only, and each app is its own. Where no server can start, the
// file has one test saying why, which passes, or fails with DOGU_REQUIRE_SQL=1 (CI).
import { createRequire } from 'node:module'
import { format } from 'node:util'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { MinatoDatabase } from '../src/database/minato-database'
import type { Session } from '../src/session'
import { type AskerContext, DatabasePendingStore, PENDING_TABLE, type PendingRecord, PermissionEngine, type PermissionRequest, type ResumedCall } from '../src/permissions'
import { type MariaDBDatabase, runMariaDB, sqlTierDidNotRun } from '../../../test-support/mariadb'
import { patchIndexes } from '../../koishi/tests/sql-instance/mysql-indexes'

const requireKoishi = createRequire(new URL('../../koishi/package.json', import.meta.url))
type KoishiModule = typeof import('../../koishi/node_modules/koishi')

const fileStarted = performance.now()
const started = await runMariaDB()
const ROUNDS = 30

const caller: Session = { id: 'mock:c1', userId: 'u1', channelId: 'c1', platform: 'mock', authority: 1 }

function record(id: string): PendingRecord {
  return {
    id,
    callId: `call-${id}`,
    tool: 'save',
    args: { file: 'notes.txt' },
    permission: { name: 'tool:save' },
    effect: 'write',
    summary: 'save(file=notes.txt)',
    reason: 'no rule matches; write tools need approval by default',
    session: { id: 'mock:c1', userId: 'u1', platform: 'mock' },
    approvers: { userId: 'u1', platform: 'mock', authority: 4 },
    createdAt: Date.now(),
    expiresAt: Date.now() + 600_000,
    instance: 'a',
  }
}

if ('reason' in started) {
  sqlTierDidNotRun(started.reason)
} else {
  const server = started.server
  const stops: (() => Promise<void>)[] = []
  const measured: { claimsMs?: number } = {}

  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop()
  })

  afterAll(async () => {
    await server.stop()
    const ms = (value?: number) => value === undefined ? 'not measured' : `${Math.round(value)} ms`
    console.log(`sql tier: durable-permissions.sql.spec.ts took ${((performance.now() - fileStarted) / 1000).toFixed(2)} s (mariadbd ${server.version}); ${ROUNDS} rounds of two racing claims took ${ms(measured.claimsMs)}`)
  })

  /** A Koishi app in this process on `database`, with the MySQL driver (its own connection pool). */
  async function connect(database: MariaDBDatabase): Promise<MinatoDatabase> {
    const { App } = requireKoishi('koishi') as KoishiModule
    const app = new App()
    const mysql = requireKoishi('@koishijs/plugin-database-mysql')
    const driver = mysql.default ?? mysql
    patchIndexes(driver)
    app.plugin(driver, { ...database })
    await app.start()
    stops.push(() => app.stop())
    for (let i = 0; i < 500 && !app.get('database'); i++) await new Promise((resolve) => setTimeout(resolve, 20))
    if (!app.get('database')) throw new Error('the MySQL driver did not connect within 10 s')
    return app.get('database') as unknown as MinatoDatabase
  }

  describe(`MariaDB ${server.version.split('-')[0]}: two instances on one dogu_pending table`, { timeout: 120_000 }, () => {
    it(`${ROUNDS} rounds of two instances claiming the same request at once: exactly one wins each time`, async () => {
      const database = await server.createDatabase('dogu_pending_claims')
      const a = new DatabasePendingStore({ database: await connect(database) })
      // One at a time: minato's MySQL driver creates its tables without checking again.
      await a.load()
      const b = new DatabasePendingStore({ database: await connect(database) })
      await b.load()
      const wins = { a: 0, b: 0 }
      const began = performance.now()
      for (let round = 0; round < ROUNDS; round++) {
        const id = `race-${round}`
        await a.put(record(id))
        const [onA, onB] = await Promise.all([a.claim(id, 'a', 'mock:alice'), b.claim(id, 'b', 'mock:bob')])
        expect([onA, onB].filter(Boolean)).toHaveLength(1)
        if (onA) wins.a++
        else wins.b++
        expect(await b.get(id)).toMatchObject({ claimedBy: onA ? 'a' : 'b', claimedFor: onA ? 'mock:alice' : 'mock:bob' })
      }
      measured.claimsMs = performance.now() - began
      expect(wins.a + wins.b).toBe(ROUNDS)
      // What the server's own client reads: one claimant per row.
      const rows = (await server.query(`SELECT claimedBy, COUNT(*) FROM \`${database.database}\`.${PENDING_TABLE} GROUP BY claimedBy ORDER BY claimedBy`)).split('\n').filter(Boolean).map((line) => line.split('\t'))
      expect(rows).toEqual([...(wins.a ? [['a', String(wins.a)]] : []), ...(wins.b ? [['b', String(wins.b)]] : [])])
    })

    it('asked on A, answered on B at the same moment as on A: the call runs once, and A\'s caller hears where', async () => {
      const database = await server.createDatabase('dogu_pending_engines')
      const engines = []
      for (const id of ['a', 'b']) {
        const warnings: string[] = []
        const shown: { request: PermissionRequest; context: AskerContext }[] = []
        const resumed: ResumedCall[] = []
        const engine = new PermissionEngine({
          pendingStore: new DatabasePendingStore({ database: await connect(database) }),
          instanceId: id,
          logger: { debug() {}, warn: (fmt, ...args) => warnings.push(format(fmt, ...args)) },
        })
        await engine.ready
        engine.addAsker((request, context) => { shown.push({ request, context }) })
        engine.onResume({ defines: () => true, resume: async (call) => { resumed.push(call); return { taskId: `${id}-${resumed.length}` } } })
        stops.push(() => engine.stop())
        engines.push({ engine, warnings, shown, resumed })
      }
      const [a, b] = engines
      let ranOnA = 0
      for (let round = 0; round < 10; round++) {
        const outcome = a.engine.approve({ session: caller, permission: { name: 'tool:save' }, effect: 'write', tool: 'save', args: { file: `f${round}` }, callId: `c${round}` }, new AbortController().signal)
        const mine = a.shown.at(-1)!
        await mine.context.kept
        await b.engine.refreshPending()
        const theirs = b.shown.find((item) => item.request.restored?.originalId === mine.request.id)!
        const [onA, onB] = await Promise.all([
          mine.context.answer!({ decision: 'allow', by: { id: 'u1', platform: 'mock' } }),
          theirs.context.answer!({ decision: 'allow', by: { id: 'op', platform: 'mock', authority: 4 } }),
        ])
        expect([onA.status, onB.status].sort()).toEqual(['accepted', 'taken'])
        const result = await outcome
        if (onA.status === 'accepted') {
          ranOnA++
          expect(result.decision).toBe('allow')
        } else {
          expect(result).toMatchObject({ decision: 'deny', reason: 'the request was answered on another instance (b) by mock:op; the call runs there, not here' })
        }
      }
      expect(ranOnA + b.resumed.length).toBe(10)
      expect([...a.warnings, ...b.warnings]).toEqual([])
    })
  })
}
