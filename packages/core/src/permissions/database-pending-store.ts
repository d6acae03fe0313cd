import type { MinatoDatabase } from '../database/minato-database'
import { type Logger, silentLogger } from '../logger'
import type { PendingRecord, PendingStore, PendingStoreLoad } from './pending-record'
import { parseRecord, recordText, sessionOf } from './pending-record-check'

/** The table pending requests live in. */
export const PENDING_TABLE = 'dogu_pending'

/** How long a claimed row outlives its expiry before a load removes it (its claimant died before removing it). */
const CLAIMED_GRACE_MS = 60_000

/**
 * One row per request: the record as JSON text, plus the columns a claim writes and an
 * operator reads. `claimedBy` is `''` while the request is open: one conditional update
 * (`WHERE id = ? AND claimedBy = ''`) claims it.
 */
const FIELDS = {
  id: { type: 'string', length: 255 },
  tool: { type: 'string', length: 255 },
  sessionId: { type: 'string', length: 255 },
  instance: { type: 'string', length: 255 },
  claimedBy: { type: 'string', length: 255, initial: '' },
  claimedFor: { type: 'string', length: 255, initial: '' },
  expiresAt: { type: 'double' },
  record: { type: 'text' },
}

export interface DatabasePendingStoreOptions {
  /** A minato database: Koishi's `ctx.database`, or a Cordis 4 app's minato service. */
  database: MinatoDatabase
  /** Where writes dropped after `detach` are reported. */
  logger?: Logger
}

/**
 * Pending requests in a minato table (`dogu_pending`), shared by every instance on that
 * database (`shared`): any of them may answer a request another asked.
 *
 * `claim` is one conditional update, `UPDATE dogu_pending SET claimedBy = ?, claimedFor = ?
 * WHERE id = ? AND claimedBy = ''`, and it is won when minato says it matched a row. On MySQL
 * and MariaDB that count is the statement's affected rows, on PostgreSQL the rows it returned
 * (`RETURNING *`): the row lock makes a second claimant's update match nothing once the first
 * committed. minato's SQLite and memory drivers carry an update out as a read, then a write
 * by primary key, so two claims in one process could both read the row open; this store runs
 * the writes of one request one after another within the process (one queue per request id
 * and database object, shared by every store on that object). A SQLite file is read by one
 * process only; two connections to a SQL server (two apps, two processes) race in the server,
 * where the update is one statement.
 *
 * A row whose record does not parse, is not a well-formed request or is not the row's own is
 * reported by `load` (`bad`) and removed by the engine. Claimed rows are not loaded; one whose
 * expiry passed a minute ago is removed (its claimant stopped before removing it).
 */
export class DatabasePendingStore implements PendingStore {
  readonly shared = true
  private readonly database: MinatoDatabase
  private readonly logger: Logger
  private prepared?: Promise<void>
  private detached?: string

  constructor(options: DatabasePendingStoreOptions) {
    this.database = options.database
    this.logger = options.logger ?? silentLogger
  }

  async load(): Promise<PendingStoreLoad> {
    await this.prepare()
    const rows = await this.database.get(PENDING_TABLE, {})
    const records: PendingRecord[] = []
    const bad: PendingStoreLoad['bad'] = []
    const now = Date.now()
    for (const row of rows) {
      const read = readRow(row)
      if ('why' in read) {
        const session = sessionOf(read.value) ?? (typeof row.sessionId === 'string' && row.sessionId ? { id: row.sessionId } : undefined)
        bad.push({ ...(typeof row.id === 'string' ? { id: row.id } : {}), why: `row ${JSON.stringify(row.id)} of ${PENDING_TABLE} ${read.why}`, ...(session ? { session } : {}) })
      } else if (read.claimedBy === undefined) {
        records.push(read)
      } else if (read.expiresAt + CLAIMED_GRACE_MS < now) {
        await this.remove(read.id)
      }
    }
    return { records: records.sort((a, b) => a.createdAt - b.createdAt), bad }
  }

  async put(record: PendingRecord): Promise<void> {
    const row = toRow(record)
    return inTurn(this.database, record.id, async () => {
      if (this.dropped('writing', record.id)) throw new Error(`the table ${PENDING_TABLE} cannot be written: ${this.detached}`)
      await this.prepare()
      await this.database.upsert(PENDING_TABLE, [row])
    })
  }

  remove(id: string): Promise<void> {
    return inTurn(this.database, id, async () => {
      if (this.dropped('removing', id)) return
      await this.prepare()
      await this.database.remove(PENDING_TABLE, { id })
    })
  }

  claim(id: string, instance: string, by: string): Promise<boolean> {
    return inTurn(this.database, id, async () => {
      if (this.detached !== undefined) throw new Error(`the table ${PENDING_TABLE} cannot be written: ${this.detached}`)
      await this.prepare()
      const { matched } = await this.database.set(PENDING_TABLE, { id, claimedBy: '' }, { claimedBy: instance, claimedFor: by })
      if (typeof matched !== 'number') throw new Error(`the database did not say whether claiming a row of ${PENDING_TABLE} matched it, so a request cannot be claimed in it`)
      return matched > 0
    })
  }

  async get(id: string): Promise<PendingRecord | undefined> {
    await this.prepare()
    const [row] = await this.database.get(PENDING_TABLE, { id })
    if (!row) return undefined
    const read = readRow(row)
    return 'why' in read ? undefined : read
  }

  /**
   * The database went away (its driver stopped before Dogu, as when the app stops): writes
   * not yet made are dropped, and reads and claims fail, from now on.
   */
  detach(reason: string): void {
    this.detached = reason
  }

  get gone(): string | undefined {
    return this.detached
  }

  private dropped(action: string, id: string): boolean {
    if (this.detached === undefined) return false
    this.logger.debug('%s pending request %s in the table %s did not happen: %s', action, id, PENDING_TABLE, this.detached)
    return true
  }

  private prepare(): Promise<void> {
    if (this.detached !== undefined) return Promise.reject(new Error(`the table ${PENDING_TABLE} cannot be read: ${this.detached}`))
    // A failed preparation (the database was down) is tried again at the next use.
    return this.prepared ??= Promise.resolve().then(() => this.database.extend(PENDING_TABLE, FIELDS, { primary: 'id' })).catch((error) => {
      this.prepared = undefined
      throw error
    })
  }
}

function toRow(record: PendingRecord): Record<string, unknown> {
  const { claimedBy, claimedFor, ...open } = record
  return {
    id: record.id,
    tool: clip(record.tool),
    sessionId: clip(record.session.id),
    instance: clip(record.instance),
    claimedBy: claimedBy ?? '',
    claimedFor: claimedFor ?? '',
    expiresAt: record.expiresAt,
    record: recordText(open),
  }
}

/** The row's request, its claim from the columns, or why it is not one. */
function readRow(row: Record<string, unknown>): PendingRecord | { why: string; value?: unknown } {
  const read = parseRecord(row.record)
  if ('why' in read) return read
  if (read.id !== row.id) return { why: `holds request ${JSON.stringify(read.id)} under another id`, value: read }
  delete read.claimedBy
  delete read.claimedFor
  if (typeof row.claimedBy === 'string' && row.claimedBy) {
    read.claimedBy = row.claimedBy
    if (typeof row.claimedFor === 'string' && row.claimedFor) read.claimedFor = row.claimedFor
  }
  return read
}

/** At most the 255 characters a column holds (the record keeps the whole text). */
function clip(text: string): string {
  return text.length <= 255 ? text : Array.from(text).slice(0, 255).join('')
}

/** The tail of each request's queue, per database object in this process (see the class doc). */
const queues = new WeakMap<object, Map<string, Promise<void>>>()

function inTurn<T>(database: object, key: string, run: () => Promise<T>): Promise<T> {
  let turns = queues.get(database)
  if (!turns) queues.set(database, turns = new Map())
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
