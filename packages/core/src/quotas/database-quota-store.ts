import { sha256 } from '../audit/canonical-json'
import type { MinatoDatabase, MinatoRow } from '../database/minato-database'
import { DoguError } from '../errors'
import { messageOf } from '../error-message'
import { type Logger, silentLogger } from '../logger'
import type { QuotaSlot, QuotaStore } from './quota-store'

/** The table quota counts live in: one row per quota, subject and window. */
export const QUOTA_TABLE = 'dogu_quota'

/**
 * One row per quota, subject and window. `key` is the SHA-256 of the slot's key (the quota,
 * the subject and the window's start): a slot key holds NUL bytes (which sql.js cuts a
 * statement at), may be longer than the column, and differs from another only in case where
 * MySQL's default collation would call them equal. The other columns are for people reading
 * the table; `end` is what ended windows are deleted by.
 */
const FIELDS = {
  key: { type: 'string', length: 255 },
  quota: { type: 'string', length: 255 },
  subject: { type: 'string', length: 255 },
  start: { type: 'double' },
  end: { type: 'double' },
  count: { type: 'unsigned', initial: 0, nullable: false },
}

/** How often `take` starts a sweep of ended windows, at most. */
const SWEEP_EVERY_MS = 60_000
/** How long after its end a window's row is kept: instances whose clocks disagree by less still count in it. */
const SWEEP_GRACE_MS = 60_000
/** Slot keys whose row keys a store remembers before it starts over. */
const REMEMBERED = 4096

export interface DatabaseQuotaStoreOptions {
  /** A minato database: Koishi's `ctx.database`, or a Cordis 4 app's minato service. */
  database: MinatoDatabase
  /** Where a failed sweep of ended windows is reported (`warn`), and units dropped after `close` (`debug`). */
  logger?: Logger
}

/**
 * Quota counts in a minato table (`dogu_quota`), shared by every instance on it.
 *
 * Atomic method: a row per window with a conditional increment. `take` is one
 * `UPDATE dogu_quota SET count = count + 1 WHERE key = ? AND count < max` (minato's `set`
 * with a `$add` of the row's `count`), and the unit is taken when it matched the row. When
 * it matched nothing (no row yet, or the window is used up), the row is made by an upsert that
 * leaves `count` alone (`INSERT … ON DUPLICATE KEY UPDATE` on MySQL), and the update is run
 * again: two instances making one window's row at once both go on, and neither fails on a
 * duplicate key (minato's MySQL driver would log a warning for one, and its memory driver's
 * `create` does not see a duplicate made meanwhile). `give` is the same update with `- 1`
 * where `count > 0`; `add` one with `+ n` and no condition, making the row the same way.
 * A refusal so costs three statements, not one: a store that remembered rows it had seen
 * would refuse every call of a window whose row another instance swept (a clock ahead).
 *
 * minato's memory and SQLite drivers carry out such an update as a read, then a write in
 * JavaScript, so two updates of one row in one process could interleave. This store runs
 * the operations on one slot one after another within the process (one queue per slot,
 * shared by every store in it); across processes only a SQL server shares a table, and
 * there the update is one statement.
 *
 * Errors of the database are not caught: a `take` that fails rejects, and `QuotaBook` fails
 * the call closed (`quota_unavailable`); `used` and `add` reject likewise. Rows of windows
 * that ended more than a minute ago are deleted by `sweep`, which `take` starts at most once
 * a minute without waiting for it.
 */
export class DatabaseQuotaStore implements QuotaStore {
  private readonly database: MinatoDatabase
  private readonly logger: Logger
  /** Slot key → row key: a hash is computed once per slot. */
  private readonly rowKeys = new Map<string, string>()
  private nextSweep = 0
  private closed = false

  constructor(options: DatabaseQuotaStoreOptions) {
    if (!options?.database) throw new DoguError('INVALID_OPTIONS', 'DatabaseQuotaStore needs a database')
    this.database = options.database
    this.logger = options.logger ?? silentLogger
    // At once, not at the first call: two instances whose first calls create the table
    // together race in minato's MySQL driver.
    this.database.extend(QUOTA_TABLE, FIELDS, { primary: 'key' })
  }

  take(slot: QuotaSlot): Promise<boolean> {
    return inTurn(slot.key, async () => {
      this.check()
      const key = await this.rowKey(slot)
      let taken = await this.increment(key, slot.max)
      if (!taken) {
        await this.database.upsert(QUOTA_TABLE, [this.row(key, slot)])
        taken = await this.increment(key, slot.max)
      }
      this.sweepNow()
      return taken
    })
  }

  give(slot: QuotaSlot): Promise<void> {
    return inTurn(slot.key, async () => {
      if (this.closed) return this.dropped('a unit given back', slot)
      const key = await this.rowKey(slot)
      await this.database.set(QUOTA_TABLE, { key, count: { $gt: 0 } }, (row) => ({ count: { $subtract: [row.count, 1] } }))
    })
  }

  async used(slots: readonly QuotaSlot[]): Promise<number[]> {
    if (!slots.length) return []
    this.check()
    const keys = await Promise.all(slots.map((slot) => this.rowKey(slot)))
    const rows = await this.database.get(QUOTA_TABLE, { key: [...new Set(keys)] }, { fields: ['key', 'count'] })
    const counts = new Map(rows.map((row) => [row.key, Number(row.count) || 0]))
    return keys.map((key) => counts.get(key) ?? 0)
  }

  add(slot: QuotaSlot, count: number): Promise<void> {
    if (!Number.isSafeInteger(count) || count < 0) return Promise.reject(new DoguError('INVALID_OPTIONS', `a quota count to add must be a whole number, 0 or more (got ${count})`))
    if (!count) return Promise.resolve()
    return inTurn(slot.key, async () => {
      if (this.closed) return this.dropped(`${count} unit(s) carried over`, slot)
      const key = await this.rowKey(slot)
      const grow = (row: MinatoRow) => ({ count: { $add: [row.count, count] } })
      if (!await this.matched({ key }, grow)) {
        await this.database.upsert(QUOTA_TABLE, [this.row(key, slot)])
        if (!await this.matched({ key }, grow)) throw new Error(`the row of quota "${slot.quota}" (${slot.subject}) could not be made in the table ${QUOTA_TABLE}`)
      }
    })
  }

  /**
   * Deletes the rows of windows that ended more than a minute before `now` (the minute is for
   * instances whose clocks disagree), and resolves with how many the driver says went. `take`
   * starts one at most once a minute, and does not wait for it.
   */
  async sweep(now = Date.now()): Promise<number> {
    this.check()
    const result = await this.database.remove(QUOTA_TABLE, { end: { $lt: now - SWEEP_GRACE_MS } })
    const removed = (result as { removed?: unknown } | undefined)?.removed
    return typeof removed === 'number' ? removed : 0
  }

  /** The database is gone (its driver stopped before Dogu): no sweep starts, units given back are dropped, and `take` fails. */
  close(): void {
    this.closed = true
    this.rowKeys.clear()
  }

  private increment(key: string, max: number): Promise<boolean> {
    return this.matched({ key, count: { $lt: max } }, (row) => ({ count: { $add: [row.count, 1] } }))
  }

  /** Whether the update matched the row. */
  private async matched(query: Record<string, unknown>, update: (row: MinatoRow) => Record<string, unknown>): Promise<boolean> {
    const { matched } = await this.database.set(QUOTA_TABLE, query, update)
    if (typeof matched !== 'number') throw new Error(`the database did not say whether an update of the table ${QUOTA_TABLE} matched a row, so quota counts cannot be kept in it`)
    return matched > 0
  }

  private sweepNow() {
    const now = Date.now()
    if (this.closed || now < this.nextSweep) return
    this.nextSweep = now + SWEEP_EVERY_MS
    this.sweep(now).catch((error) => {
      if (!this.closed) this.logger.warn('deleting ended quota windows from the table %s failed: %s', QUOTA_TABLE, messageOf(error))
    })
  }

  private check() {
    if (this.closed) throw new Error(`the quota table ${QUOTA_TABLE} cannot be reached: its database stopped`)
  }

  private dropped(what: string, slot: QuotaSlot) {
    this.logger.debug('%s to quota "%s" (%s) not written to the table %s: its database stopped', what, slot.quota, slot.subject, QUOTA_TABLE)
  }

  private async rowKey(slot: QuotaSlot): Promise<string> {
    let key = this.rowKeys.get(slot.key)
    if (key === undefined) {
      key = await sha256(slot.key)
      if (this.rowKeys.size >= REMEMBERED) this.rowKeys.clear()
      this.rowKeys.set(slot.key, key)
    }
    return key
  }

  private row(key: string, slot: QuotaSlot): Record<string, unknown> {
    return { key, quota: clip(slot.quota), subject: clip(slot.subject), start: slot.start, end: slot.end }
  }
}

/** The tail of each slot's queue in this process (see the class doc). */
const turns = new Map<string, Promise<void>>()

/** Runs `run` once every operation on the same slot that came before it has settled. */
function inTurn<T>(key: string, run: () => Promise<T>): Promise<T> {
  const before = turns.get(key)
  const result = before ? before.then(run) : run()
  const settled = result.then(noop, noop)
  turns.set(key, settled)
  void settled.then(() => {
    if (turns.get(key) === settled) turns.delete(key)
  })
  return result
}

function noop() {}

/** At most the 255 characters a column holds. */
function clip(text: string): string {
  return text.length <= 255 ? text : Array.from(text).slice(0, 255).join('')
}
