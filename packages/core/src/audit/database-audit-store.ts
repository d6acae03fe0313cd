import { messageOf } from '../error-message'
import type { MinatoCursor, MinatoDatabase } from '../database/minato-database'
import { fileExists, renameMigrated } from '../database/migrated-file'
import { info, type Logger, silentLogger } from '../logger'
import { JsonlAuditStore } from './jsonl-audit-store'
import type { AuditFilter, AuditRecord, AuditRetention } from './audit-record'
import { type AuditStore, matchesFilter } from './audit-store'

/** Rows written per upsert when migrating a file. */
const MIGRATE_BATCH = 500

/** The table audit records live in. */
export const AUDIT_TABLE = 'dogu_audit'

/**
 * One row per record: the columns a query narrows by, and the whole record as JSON text
 * (so nothing is lost, whatever the record holds). `seq` orders rows as they were written:
 * the writer's clock in microseconds, kept increasing within a store.
 */
const FIELDS = {
  id: { type: 'string', length: 255 },
  at: { type: 'double' },
  seq: { type: 'double' },
  tool: { type: 'string', length: 255 },
  outcome: { type: 'string', length: 32 },
  sessionId: { type: 'string', length: 255 },
  userId: { type: 'string', length: 255 },
  platform: { type: 'string', length: 64 },
  // `AuditRecord.early`: pruned first. Rows written before the column existed read as not early.
  early: { type: 'boolean' },
  // Longer than 64 KiB: MySQL's `text` would cut a record with long arguments.
  record: { type: 'text', length: 4_194_304 },
}

export interface DatabaseAuditStoreOptions {
  /** A minato database: Koishi's `ctx.database`, or a Cordis 4 app's minato service. */
  database: MinatoDatabase
  /** Where malformed rows and writes dropped after `detach` are reported. */
  logger?: Logger
  /**
   * An `audit.jsonl` the bot wrote before it had a database: its records (and its rotated
   * `.1` file's) are copied into the table when the store opens, then the files are renamed
   * `<name>.migrated` and kept. Copies are keyed by record id, so a second instance migrating
   * the same file, or a crash halfway, adds nothing twice.
   */
  migrateFrom?: string
}

/**
 * Audit records in a minato table (`dogu_audit`), shared by every instance of a bot on that
 * database. Appends insert rows by their ids (unique per `AuditLog`), so instances writing at
 * once lose nothing; `query` pushes its filter, order and limit into the database; `prune`
 * deletes by cutoffs (`at` for the age; beyond `maxRecords`, the oldest `early` rows first,
 * then rows older than the N-th newest), which two instances may run at once: each deletes
 * only rows older than what it keeps, and of the early ones at most as many as were beyond.
 *
 * A row whose record does not parse is left out of queries, reported once, and kept.
 */
export class DatabaseAuditStore implements AuditStore {
  private readonly database: MinatoDatabase
  private readonly logger: Logger
  private readonly reported = new Set<string>()
  private prepared = false
  private detached?: string
  /** Where appends go once detached, when the host said (the store that replaced this one). */
  private successor?: AuditStore
  private lastSeq = 0
  private readonly migrateFrom?: string

  constructor(options: DatabaseAuditStoreOptions) {
    if (!options?.database) throw new TypeError('DatabaseAuditStore needs a database')
    this.database = options.database
    this.logger = options.logger ?? silentLogger
    this.migrateFrom = options.migrateFrom
  }

  async open(): Promise<void> {
    this.prepare()
    if (this.migrateFrom) await this.migrate(this.migrateFrom)
  }

  private async migrate(path: string): Promise<void> {
    const files = [`${path}.1`, path]
    const present = (await Promise.all(files.map(fileExists))).some(Boolean)
    if (!present) return
    // Oldest first, so their order by `seq` is the order they were written in.
    const records = (await new JsonlAuditStore(path, { logger: this.logger }).query({})).reverse()
    const base = (this.lastSeq = Math.max(this.lastSeq, Date.now() * 1000)) - records.length - 1
    for (let i = 0; i < records.length; i += MIGRATE_BATCH) {
      await this.database.upsert(AUDIT_TABLE, records.slice(i, i + MIGRATE_BATCH).map((record, j) => toRow(record, base + i + j)))
    }
    // Written first, renamed after: a crash in between migrates again, and upserts are idempotent.
    const kept: string[] = []
    for (const file of files) {
      const moved = await renameMigrated(file)
      if (moved) kept.push(moved)
    }
    info(this.logger, 'moved %d audit record(s) from %s into the table %s; the file is kept as %s', records.length, path, AUDIT_TABLE, kept.join(', '))
  }

  async append(records: readonly AuditRecord[]): Promise<void> {
    if (!records.length) return
    if (this.detached !== undefined) return this.dropped(records)
    this.prepare()
    const base = Date.now() * 1000
    const rows = records.map((record) => {
      this.lastSeq = Math.max(this.lastSeq + 1, base)
      return toRow(record, this.lastSeq)
    })
    try {
      await this.database.upsert(AUDIT_TABLE, rows)
    } catch (error) {
      // Detached while the write was under way: the driver went under it.
      if (this.detached === undefined) throw error
      return this.dropped(records)
    }
  }

  /** Records a detached store was handed: to its successor, else dropped with a debug line. */
  private dropped(records: readonly AuditRecord[]): Promise<void> | undefined {
    // Writes the log started before it switched stores: they go where it switched to.
    if (this.successor) return this.successor.append(records)
    // The app is stopping with its driver gone first: nothing can reach the table now.
    this.logger.debug('%d audit record(s) not written to the table %s: %s', records.length, AUDIT_TABLE, this.detached)
    return undefined
  }

  async query(filter: AuditFilter): Promise<AuditRecord[]> {
    if (this.detached !== undefined) throw new Error(`the audit table ${AUDIT_TABLE} cannot be read: ${this.detached}`)
    this.prepare()
    const where = whereOf(filter)
    if (!where) return []
    const limit = filter.limit
    if (limit !== undefined && !(limit > 0)) return []
    const cursor: MinatoCursor = { sort: { seq: 'desc' } }
    if (limit !== undefined && Number.isFinite(limit)) cursor.limit = Math.floor(limit)
    const rows = newestFirst(await this.database.get(AUDIT_TABLE, where, cursor))
    const out: AuditRecord[] = []
    for (const row of rows) {
      const record = this.parse(row)
      // The database selected them; checked again so the user match is exactly `matchesFilter`'s.
      if (record && matchesFilter(record, filter)) out.push(record)
      if (limit !== undefined && out.length >= limit) break
    }
    return out
  }

  async prune(retention: AuditRetention, now = Date.now()): Promise<number> {
    if (this.detached !== undefined) return 0
    try {
      return await this.pruned(retention, now)
    } catch (error) {
      if (this.detached === undefined) throw error
      return 0
    }
  }

  private async pruned(retention: AuditRetention, now: number): Promise<number> {
    this.prepare()
    let removed = 0
    removed += countOf(await this.database.remove(AUDIT_TABLE, { at: { $lt: now - retention.maxAgeMs } }))
    const max = Math.floor(retention.maxRecords)
    const nth = await this.nthNewest(max)
    if (nth === undefined) return removed
    // The rows beyond `max`: as many rows go, the early ones (calls nobody authorized) first,
    // wherever they are, so they never push out the record of an authorized or asked call.
    const beyond = (await this.database.get(AUDIT_TABLE, { seq: { $lt: nth } }, { fields: ['seq'] })).filter((row) => Number(row.seq) < nth).length
    if (!beyond) return removed
    const early = (await this.database.get(AUDIT_TABLE, { early: true }, { fields: ['seq', 'early'], sort: { seq: 'asc' }, limit: beyond }))
      // A host whose `get` ignored the query and cursor returned every row.
      .filter((row) => row.early === true || row.early === 1)
      .sort((a, b) => Number(a.seq) - Number(b.seq))
      .slice(0, beyond)
    if (early.length) removed += countOf(await this.database.remove(AUDIT_TABLE, { early: true, seq: { $lte: Number(early[early.length - 1].seq) } }))
    if (early.length < beyond) {
      // No early row was left among them: everything written before the N-th newest goes.
      // Rows written meanwhile (by this or another instance) are newer than it, and stay.
      const last = await this.nthNewest(max)
      if (last !== undefined) removed += countOf(await this.database.remove(AUDIT_TABLE, { seq: { $lt: last } }))
    }
    return removed
  }

  /** The `seq` of the `n`-th newest row, if there are that many. */
  private async nthNewest(n: number): Promise<number | undefined> {
    const rows = newestFirst(await this.database.get(AUDIT_TABLE, {}, { fields: ['seq'], sort: { seq: 'desc' }, offset: n - 1, limit: 1 }))
    // A host whose `get` ignored the cursor returned every row.
    const nth = rows.length > 1 ? rows[n - 1] : rows[0]
    return nth && typeof nth.seq === 'number' ? nth.seq : undefined
  }

  /**
   * The database went away (its driver stopped before Dogu, as when the app stops): records
   * not yet written are dropped with a debug line instead of failing inside the driver, and
   * queries fail from now on. With `successor` (the store a host switches to as the database
   * goes while the app runs), they are appended there instead, so none is lost.
   */
  detach(reason: string, successor?: AuditStore): void {
    this.detached = reason
    this.successor = successor
  }

  /** Why the store was detached, if it was. */
  get gone(): string | undefined {
    return this.detached
  }

  private prepare() {
    if (this.prepared) return
    this.database.extend(AUDIT_TABLE, FIELDS, { primary: 'id' })
    this.prepared = true
  }

  private parse(row: Record<string, unknown>): AuditRecord | undefined {
    let problem: string
    if (typeof row.record !== 'string') {
      problem = 'has no record text'
    } else {
      try {
        const record = JSON.parse(row.record) as AuditRecord
        if (record && typeof record === 'object' && record.id === row.id && typeof record.at === 'number' && record.caller) return record
        problem = 'is not a record of its own id'
      } catch (error) {
        problem = `is not valid JSON (${messageOf(error)})`
      }
    }
    const key = String(row.id)
    if (!this.reported.has(key)) {
      this.reported.add(key)
      this.logger.warn('the audit table %s has a malformed row, kept and left out: row %s %s', AUDIT_TABLE, JSON.stringify(row.id), problem)
    }
    return undefined
  }
}

function toRow(record: AuditRecord, seq: number): Record<string, unknown> {
  const { caller } = record
  return {
    id: record.id,
    at: record.at,
    seq,
    tool: record.tool,
    outcome: record.outcome,
    sessionId: caller.sessionId ?? '',
    userId: caller.userId ?? '',
    platform: caller.platform ?? '',
    early: record.early === true,
    record: JSON.stringify(record),
  }
}

/** The filter as a minato query, or `undefined` when nothing can match (an empty outcome list). */
function whereOf(filter: AuditFilter): Record<string, unknown> | undefined {
  const where: Record<string, unknown> = {}
  if (filter.tool !== undefined) where.tool = filter.tool
  if (filter.sessionId !== undefined) where.sessionId = filter.sessionId
  if (filter.outcome !== undefined) {
    if (typeof filter.outcome === 'string') where.outcome = filter.outcome
    else if (!filter.outcome.length) return undefined
    else where.outcome = { $in: [...filter.outcome] }
  }
  if (filter.since !== undefined || filter.until !== undefined) {
    const at: Record<string, number> = {}
    if (filter.since !== undefined) at.$gte = filter.since
    if (filter.until !== undefined) at.$lt = filter.until
    where.at = at
  }
  if (filter.user !== undefined) {
    // `id`, or `platform:id`; a plain id may hold a colon itself.
    const colon = filter.user.indexOf(':')
    where.$or = colon < 0
      ? [{ userId: filter.user }]
      : [{ userId: filter.user }, { platform: filter.user.slice(0, colon), userId: filter.user.slice(colon + 1) }]
  }
  return where
}

function newestFirst(rows: Record<string, unknown>[]): Record<string, unknown>[] {
  return rows.sort((a, b) => Number(b.seq) - Number(a.seq))
}

function countOf(result: unknown): number {
  const removed = (result as { removed?: unknown } | undefined)?.removed
  return typeof removed === 'number' ? removed : 0
}
