import Schema from 'schemastery'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { DatabaseQuotaStore, defineTool, type Logger, QUOTA_TABLE, type QuotaSlot, type Session, ToolRegistry } from '../src'
import type { MinatoDatabase, MinatoRow } from '../src/database/minato-database'

// DatabaseQuotaStore on real minato drivers (memory, SQLite) is tested in
// packages/koishi/tests/database-quota-store.spec.ts, and on MariaDB with two instances in
// quotas-two-instances.sql.spec.ts. Here: which statements it sends, and what it does with a
// database that fails, hangs, yields inside an update or does not say what it matched.

afterEach(() => {
  vi.useRealTimers()
})

type Row = Record<string, unknown>
type Expr = number | { $?: [string, string]; $add?: Expr[]; $subtract?: Expr[] }

/** minato's row of an update function: each field a reference. */
const ROW: MinatoRow = new Proxy({}, { get: (_, field) => ({ $: ['row', String(field)] }) })

function evaluate(expr: unknown, row: Row): unknown {
  if (!expr || typeof expr !== 'object' || Array.isArray(expr)) return expr
  const { $, $add, $subtract } = expr as Exclude<Expr, number>
  if ($) return row[$[1]] ?? 0
  if ($add) return $add.reduce<number>((sum, term) => sum + (evaluate(term, row) as number), 0)
  if ($subtract) return (evaluate($subtract[0], row) as number) - (evaluate($subtract[1], row) as number)
  throw new Error(`the fake database cannot evaluate ${JSON.stringify(expr)}`)
}

function matches(row: Row, query: Record<string, unknown>): boolean {
  return Object.entries(query).every(([field, condition]) => {
    if (Array.isArray(condition)) return condition.includes(row[field])
    if (condition && typeof condition === 'object') {
      const { $lt, $gt } = condition as { $lt?: number; $gt?: number }
      return ($lt === undefined || (row[field] as number) < $lt) && ($gt === undefined || (row[field] as number) > $gt)
    }
    return row[field] === condition
  })
}

/**
 * A table in memory that carries out minato's queries and update expressions as far as the
 * store uses them. `calls` lists what was sent; `yieldInSet` reads and writes in two steps, as
 * minato's SQLite driver does; the hooks make a method fail or hang.
 */
function fakeDatabase(options: { yieldInSet?: boolean; matched?: boolean } = {}) {
  const rows = new Map<string, Row>()
  const calls: { method: string; query?: unknown; update?: unknown }[] = []
  const hooks: Partial<Record<'get' | 'set' | 'upsert' | 'remove', () => Promise<never> | void>> = {}
  const database: MinatoDatabase = {
    extend(table, fields, config) {
      calls.push({ method: 'extend', query: { table, fields: Object.keys(fields), primary: config?.primary } })
    },
    async get(_, query) {
      calls.push({ method: 'get', query })
      await hooks.get?.()
      return [...rows.values()].filter((row) => matches(row, query)).map((row) => ({ ...row }))
    },
    async set(_, query, update) {
      const values = typeof update === 'function' ? update(ROW) : update
      calls.push({ method: 'set', query, update: values })
      await hooks.set?.()
      const found = [...rows.values()].filter((row) => matches(row, query))
      const next = found.map((row) => Object.fromEntries(Object.entries(values).map(([field, expr]) => [field, evaluate(expr, row)])))
      if (options.yieldInSet) await new Promise((resolve) => setTimeout(resolve, 1))
      found.forEach((row, i) => Object.assign(row, next[i]))
      return options.matched === false ? {} : { matched: found.length }
    },
    async upsert(_, items) {
      calls.push({ method: 'upsert', update: items })
      await hooks.upsert?.()
      for (const item of items) {
        const row = rows.get(item.key as string) ?? { count: 0 }
        for (const [field, expr] of Object.entries(item)) row[field] = evaluate(expr, row)
        rows.set(item.key as string, row)
      }
      return {}
    },
    async remove(_, query) {
      calls.push({ method: 'remove', query })
      await hooks.remove?.()
      let removed = 0
      for (const [key, row] of rows) if (matches(row, query)) removed += +rows.delete(key)
      return { removed }
    },
  }
  const methods = () => calls.map((call) => call.method)
  return { database, rows, calls, methods, hooks }
}

function logger() {
  const warnings: string[] = []
  const debug: string[] = []
  const format = (message: string, args: unknown[]) => args.reduce<string>((text, arg) => text.replace(/%[sd]/, String(arg)), message)
  const log: Logger = {
    debug: (message, ...args) => { debug.push(format(message, args)) },
    warn: (message, ...args) => { warnings.push(format(message, args)) },
  }
  return { log, warnings, debug }
}

const HOUR = 3_600_000
const START = 1_800_000_000_000 - (1_800_000_000_000 % HOUR)
function slot(subject = 'user:discord:alice', max = 2, start = START, quota = 'search per user'): QuotaSlot {
  return { key: `${quota}\u0000${subject}\u0000${start}`, quota, subject, start, end: start + HOUR, max }
}

async function sha256(text: string) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)))
  return `sha256:${Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('')}`
}

describe('DatabaseQuotaStore: what it sends', () => {
  it('declares dogu_quota at once, keyed by the hash of the slot key', async () => {
    const { database, calls, rows } = fakeDatabase()
    const store = new DatabaseQuotaStore({ database })
    expect(calls).toEqual([{ method: 'extend', query: { table: QUOTA_TABLE, fields: ['key', 'quota', 'subject', 'start', 'end', 'count'], primary: 'key' } }])
    vi.useFakeTimers({ toFake: ['Date'], now: START + 1000 })
    expect(await store.take(slot())).toBe(true)
    // Subjects that differ only in case (equal under MySQL's default collation) are two rows.
    expect(await store.take(slot('user:discord:Alice'))).toBe(true)
    expect([...rows.keys()].sort()).toEqual([await sha256(slot().key), await sha256(slot('user:discord:Alice').key)].sort())
    expect(rows.get(await sha256(slot().key))).toEqual({ key: await sha256(slot().key), quota: 'search per user', subject: 'user:discord:alice', start: START, end: START + HOUR, count: 1 })
  })

  it('takes with one conditional increment once the row exists, and makes a missing row without touching its count', async () => {
    const { database, calls, methods } = fakeDatabase()
    vi.useFakeTimers({ toFake: ['Date'], now: START + 1000 })
    const store = new DatabaseQuotaStore({ database })
    calls.length = 0
    const key = await sha256(slot().key)
    // New window: the update matches nothing, the upsert makes the row (no count in it), the update again.
    expect(await store.take(slot())).toBe(true)
    expect(methods()).toEqual(['set', 'upsert', 'set', 'remove'])
    expect(calls[0]).toEqual({ method: 'set', query: { key, count: { $lt: 2 } }, update: { count: { $add: [{ $: ['row', 'count'] }, 1] } } })
    expect(calls[1]).toEqual({ method: 'upsert', update: [{ key, quota: 'search per user', subject: 'user:discord:alice', start: START, end: START + HOUR }] })
    calls.length = 0
    expect(await store.take(slot())).toBe(true)
    expect(methods()).toEqual(['set'])
    // Used up: the update matches nothing, and the store makes sure the row exists (another
    // instance may have swept it) before it refuses: the count stays.
    calls.length = 0
    expect(await store.take(slot())).toBe(false)
    expect(methods()).toEqual(['set', 'upsert', 'set'])
    expect(await store.used([slot()])).toEqual([2])
    // Another instance's store refuses the same way.
    const other = new DatabaseQuotaStore({ database })
    calls.length = 0
    expect(await other.take(slot())).toBe(false)
    // (and, being its first take, starts a sweep)
    expect(methods()).toEqual(['set', 'upsert', 'set', 'remove'])
    expect(await other.used([slot()])).toEqual([2])
  })

  it('gives back with a decrement where the count is above 0, adds carried counts, reads several slots in one query', async () => {
    const { database, calls, methods } = fakeDatabase()
    const store = new DatabaseQuotaStore({ database })
    await store.take(slot())
    calls.length = 0
    await store.give(slot())
    await store.give(slot())
    expect(calls).toEqual([
      { method: 'set', query: { key: await sha256(slot().key), count: { $gt: 0 } }, update: { count: { $subtract: [{ $: ['row', 'count'] }, 1] } } },
      { method: 'set', query: { key: await sha256(slot().key), count: { $gt: 0 } }, update: { count: { $subtract: [{ $: ['row', 'count'] }, 1] } } },
    ])
    calls.length = 0
    // A carried count: an unconditional `+ n`; a missing row is made first, as for a take.
    const channel = await sha256(slot('channel:discord:c1').key)
    const plus = (n: number) => ({ method: 'set', query: { key: channel }, update: { count: { $add: [{ $: ['row', 'count'] }, n] } } })
    await store.add(slot('channel:discord:c1'), 5)
    await store.add(slot('channel:discord:c1'), 0)
    await store.add(slot('channel:discord:c1'), 2)
    expect(calls).toEqual([
      plus(5),
      { method: 'upsert', update: [{ key: channel, quota: 'search per user', subject: 'channel:discord:c1', start: START, end: START + HOUR }] },
      plus(5),
      plus(2),
    ])
    calls.length = 0
    expect(await store.used([slot(), slot('channel:discord:c1'), slot('user:discord:nobody'), slot()])).toEqual([0, 7, 0, 0])
    expect(methods()).toEqual(['get'])
    expect(calls[0].query).toEqual({ key: [await sha256(slot().key), await sha256(slot('channel:discord:c1').key), await sha256(slot('user:discord:nobody').key)] })
    expect(await store.used([])).toEqual([])
    expect(methods()).toEqual(['get'])
    await expect(store.add(slot(), -1)).rejects.toThrow('a quota count to add must be a whole number, 0 or more (got -1)')
  })

  it('keeps the subject column within its 255 characters', async () => {
    const { database, rows } = fakeDatabase()
    const store = new DatabaseQuotaStore({ database })
    const long = `session:${'界'.repeat(300)}`
    await store.take(slot(long))
    const [row] = rows.values()
    expect(Array.from(row.subject as string)).toHaveLength(255)
    expect(row.key).toBe(await sha256(slot(long).key))
  })
})

describe('DatabaseQuotaStore: one slot at a time within the process', () => {
  it('gives exactly max units to takes from two stores at once, on a driver that reads then writes inside an update', async () => {
    const { database } = fakeDatabase({ yieldInSet: true })
    const [one, two] = [new DatabaseQuotaStore({ database }), new DatabaseQuotaStore({ database })]
    const takes = Array.from({ length: 60 }, (_, i) => (i % 2 ? one : two).take(slot('global', 25)))
    const others = Array.from({ length: 10 }, (_, i) => (i % 2 ? two : one).take(slot('user:discord:bob', 3)))
    const [taken, otherTaken] = await Promise.all([Promise.all(takes), Promise.all(others)])
    expect(taken.filter(Boolean)).toHaveLength(25)
    expect(otherTaken.filter(Boolean)).toHaveLength(3)
    expect(await one.used([slot('global', 25), slot('user:discord:bob', 3)])).toEqual([25, 3])
    // Gives and takes in one burst keep the count whole: 25 - 5 given + 5 taken again.
    const burst = await Promise.all([
      ...Array.from({ length: 5 }, () => one.give(slot('global', 25)).then(() => 'given')),
      ...Array.from({ length: 10 }, () => two.take(slot('global', 25))),
    ])
    expect(burst.filter((value) => value === true)).toHaveLength(5)
    expect(await two.used([slot('global', 25)])).toEqual([25])
  })

  it('does not hold up another slot while one waits for the database', async () => {
    const { database, hooks } = fakeDatabase()
    const store = new DatabaseQuotaStore({ database })
    let release!: () => void
    hooks.set = () => {
      hooks.set = undefined
      return new Promise<never>((resolve) => { release = resolve as () => void })
    }
    const stuck = store.take(slot('user:discord:alice'))
    await vi.waitFor(() => expect(release).toBeTypeOf('function'))
    expect(await store.take(slot('user:discord:bob'))).toBe(true)
    release()
    expect(await stuck).toBe(true)
  })
})

describe('DatabaseQuotaStore: failures', () => {
  it('lets a database error through: the call fails closed as quota_unavailable and its tool never runs', async () => {
    const { database, hooks } = fakeDatabase()
    const { log, warnings } = logger()
    const registry = new ToolRegistry({ logger: log, quotas: [{ tools: 'search', per: 'user', max: 5, window: '1h' }], quotaStore: new DatabaseQuotaStore({ database, logger: log }) })
    let runs = 0
    registry.define(defineTool({ name: 'search', description: 'Search', args: Schema.object({}), traits: { effect: 'read' }, run: () => `run ${++runs}` }))
    const alice: Session = { id: 'discord:c1', platform: 'discord', channelId: 'c1', userId: 'alice' }
    const call = async () => (await registry.execute([{ id: 'c1', name: 'search', arguments: {} }], { session: alice }))[0]
    expect(await call()).toMatchObject({ status: 'ok', content: 'run 1' })
    hooks.set = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:3306'))
    expect(await call()).toMatchObject({
      status: 'error',
      code: 'quota_unavailable',
      content: 'Error: the call did not run: its quota could not be counted (connect ECONNREFUSED 127.0.0.1:3306).',
    })
    expect(runs).toBe(1)
    expect(warnings).toEqual(['the quota count of search (c1) failed, so it did not run: connect ECONNREFUSED 127.0.0.1:3306'])
    hooks.get = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:3306'))
    await expect(registry.quotas.status(alice)).rejects.toThrow('connect ECONNREFUSED 127.0.0.1:3306')
    await expect(registry.quotas.store.give(slot())).rejects.toThrow('connect ECONNREFUSED')
    hooks.set = undefined
    hooks.upsert = () => Promise.reject(new Error('read-only'))
    await expect(registry.quotas.store.add(slot('user:discord:carol'), 2)).rejects.toThrow('read-only')
  })

  it('refuses to count on a driver whose update does not say what it matched', async () => {
    const { database } = fakeDatabase({ matched: false })
    const store = new DatabaseQuotaStore({ database })
    await expect(store.take(slot())).rejects.toThrow('the database did not say whether an update of the table dogu_quota matched a row, so quota counts cannot be kept in it')
  })

  it('sweeps ended windows at most once a minute, without holding up a take, and reports a sweep that failed', async () => {
    const { database, hooks, calls, rows } = fakeDatabase()
    const { log, warnings } = logger()
    vi.useFakeTimers({ toFake: ['Date'], now: START + 10 * 60_000 })
    const store = new DatabaseQuotaStore({ database, logger: log })
    // A window that ended two hours ago, and one that ended 30 s ago (kept: clocks may disagree).
    await store.add(slot('user:discord:alice', 2, START - 2 * HOUR), 1)
    const recent = { ...slot('user:discord:alice', 2, START - HOUR), end: START + 10 * 60_000 - 30_000 }
    await store.add(recent, 1)
    hooks.remove = () => new Promise<never>(() => {})
    expect(await store.take(slot())).toBe(true)
    expect(calls.filter((call) => call.method === 'remove')).toEqual([{ method: 'remove', query: { end: { $lt: START + 10 * 60_000 - 60_000 } } }])
    vi.setSystemTime(START + 10 * 60_000 + 59_000)
    expect(await store.take(slot())).toBe(true)
    expect(calls.filter((call) => call.method === 'remove')).toHaveLength(1)
    // A minute later, another sweep; this one fails, and says so.
    hooks.remove = () => Promise.reject(new Error('disk full'))
    vi.setSystemTime(START + 11 * 60_000)
    expect(await store.take(slot())).toBe(false)
    await vi.waitFor(() => expect(warnings).toEqual(['deleting ended quota windows from the table dogu_quota failed: disk full']))
    hooks.remove = undefined
    // At 10 min: the window that ended 30 s before is kept, the one two hours before goes.
    expect(await store.sweep(START + 10 * 60_000)).toBe(1)
    expect([...rows.values()].map((row) => row.start).sort()).toEqual([START - HOUR, START])
  })

  it('after close: takes and reads fail saying why, units given back or carried are dropped, no sweep starts', async () => {
    const { database, methods, calls } = fakeDatabase()
    const { log, debug } = logger()
    const store = new DatabaseQuotaStore({ database, logger: log })
    await store.take(slot())
    store.close()
    calls.length = 0
    await expect(store.take(slot())).rejects.toThrow('the quota table dogu_quota cannot be reached: its database stopped')
    await expect(store.used([slot()])).rejects.toThrow('the quota table dogu_quota cannot be reached: its database stopped')
    await expect(store.sweep()).rejects.toThrow('the quota table dogu_quota cannot be reached')
    await store.give(slot())
    await store.add(slot(), 3)
    expect(methods()).toEqual([])
    expect(debug).toEqual([
      'a unit given back to quota "search per user" (user:discord:alice) not written to the table dogu_quota: its database stopped',
      '3 unit(s) carried over to quota "search per user" (user:discord:alice) not written to the table dogu_quota: its database stopped',
    ])
  })
})
