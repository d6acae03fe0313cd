import { describe, expect, it } from 'vitest'
import { type AuditRecord, DatabaseAuditStore, MemoryAuditStore } from '../src/audit'
import type { MinatoDatabase } from '../src/database/minato-database'

// DatabaseAuditStore on real minato drivers (memory, SQLite) is tested in
// packages/koishi/tests/database-audit-store.spec.ts, and on MariaDB with two instances in
// audit-two-instances.sql.spec.ts. Here, what it does with a host whose database is less
// than minato: a `get` that ignores its query and cursor, a driver that goes mid-write.

function record(n: number, user = 'alice', outcome: AuditRecord['outcome'] = 'ok'): AuditRecord {
  return { id: `aud_t_${n}`, at: 1000 * n, endedAt: 1000 * n + 1, tool: n % 2 ? 'odd' : 'even', callId: `c${n}`, caller: { sessionId: 's', platform: 'discord', userId: user }, outcome, durationMs: 1 }
}

/** A table whose `get` returns every row, in no order, whatever it is asked; `remove` knows `$lt`. */
function crudeDatabase() {
  let rows: Record<string, unknown>[] = []
  const database: MinatoDatabase & { fail?: () => void } = {
    extend() {},
    async get() {
      return [...rows].reverse()
    },
    async set() {
      return {}
    },
    async upsert(_, added) {
      database.fail?.()
      rows.push(...added)
      return {}
    },
    async remove(_, query) {
      const [[key, condition]] = Object.entries(query) as [[string, { $lt: number }]]
      const before = rows.length
      rows = rows.filter((row) => !((row[key] as number) < condition.$lt))
      return { removed: before - rows.length }
    },
  }
  return database
}

describe('DatabaseAuditStore on a crude host database', () => {
  it('still filters, orders and limits itself when `get` ignores the query and cursor', async () => {
    const store = new DatabaseAuditStore({ database: crudeDatabase() })
    await store.open()
    await store.append([record(1), record(2, 'bob'), record(3, 'alice', 'denied'), record(4)])
    const ids = async (filter: Parameters<typeof store.query>[0]) => (await store.query(filter)).map((r) => r.id)
    expect(await ids({})).toEqual(['aud_t_4', 'aud_t_3', 'aud_t_2', 'aud_t_1'])
    expect(await ids({ user: 'discord:alice', limit: 2 })).toEqual(['aud_t_4', 'aud_t_3'])
    expect(await ids({ tool: 'odd', outcome: 'ok' })).toEqual(['aud_t_1'])
    expect(await ids({ since: 2000, until: 4000 })).toEqual(['aud_t_3', 'aud_t_2'])
    expect(await store.prune({ maxRecords: 2, maxAgeMs: 1e9 }, 5000)).toBe(2)
    expect(await ids({})).toEqual(['aud_t_4', 'aud_t_3'])
  })

  it('hands records to its successor once detached, and drops a write the driver cut off', async () => {
    const database = crudeDatabase()
    const debug: string[] = []
    const store = new DatabaseAuditStore({ database, logger: { debug: (line, ...args) => { debug.push(`${line} ${args.join(' ')}`) }, warn: () => { throw new Error('no warning expected') } } })
    await store.open()
    // The driver goes while the write is under way: the store was detached meanwhile.
    database.fail = () => {
      store.detach('the app stopped')
      throw new TypeError("Cannot read properties of undefined (reading 'model')")
    }
    await expect(store.append([record(1)])).resolves.toBeUndefined()
    expect(debug).toEqual(['%d audit record(s) not written to the table %s: %s 1 dogu_audit the app stopped'])
    const next = new MemoryAuditStore()
    const moved = new DatabaseAuditStore({ database: crudeDatabase() })
    moved.detach('the database went away', next)
    await moved.append([record(2)])
    expect((await next.query({})).map((r) => r.id)).toEqual(['aud_t_2'])
    await expect(moved.query({})).rejects.toThrow('the audit table dogu_audit cannot be read: the database went away')
  })
})
