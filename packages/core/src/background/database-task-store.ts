import { fileExists, renameMigrated } from '../database/migrated-file'
import type { MinatoDatabase } from '../database/minato-database'
import { WriteQueue } from '../database/write-queue'
import { DoguError } from '../errors'
import { messageOf } from '../error-message'
import { info, type Logger, silentLogger } from '../logger'
import { type BackgroundTask, isBackgroundTask } from './background-task'
import { JsonFileTaskStore } from './json-file-task-store'
import type { TaskStore } from './task-store'

/** The table task records live in. */
export const TASK_TABLE = 'dogu_task'

/**
 * One row per task: the record as JSON text, plus the columns the lease is decided on.
 * `owner` is the instance running the task; `leaseUntil` the epoch ms until which it is
 * known to be alive (renewed by its heartbeat).
 */
const FIELDS = {
  id: { type: 'string', length: 255 },
  status: { type: 'string', length: 32 },
  owner: { type: 'string', length: 255 },
  leaseUntil: { type: 'double' },
  sessionId: { type: 'string', length: 255 },
  record: { type: 'text' },
  updatedAt: { type: 'double' },
}

export interface DatabaseTaskStoreOptions {
  /** A minato database: Koishi's `ctx.database`, or a Cordis 4 app's minato service. */
  database: MinatoDatabase
  /**
   * This instance's id, unique among the instances sharing the database and stable across
   * its restarts: tasks a previous run of the same id left `running` are interrupted at once.
   */
  instanceId: string
  /**
   * How long a running task's lease lasts, in milliseconds. The owner renews it (`renew()`,
   * every third of this); once it lapses, other instances report the task `interrupted`.
   * @default 30_000
   */
  leaseMs?: number
  /** Where malformed rows, lost races and migration are reported. */
  logger?: Logger
  /**
   * A `JsonFileTaskStore` file to move into the table once, at the first load: its records
   * are written to the table (running ones leased to this instance: a start reads them
   * `interrupted`, a database that appears while they run keeps them), then the file is renamed
   * `<name>.migrated.json` and kept.
   */
  migrateFrom?: string
}

/**
 * Task records in a minato table (`dogu_task`), shared by every instance of a bot on that
 * database. Only the instance running a task settles it: a task's row names its `owner`
 * and a lease, which the owner renews while the task runs. Settling is a conditional
 * update (still running, still ours); declaring another instance's task `interrupted` is
 * one too (still running, lease lapsed), so a live owner and a lapsed lease never both win.
 *
 * `load()` returns this instance's records and those whose lease lapsed (the engine turns
 * `running` ones into `interrupted`); `sync()` returns every row, for `BackgroundEngine.refresh`.
 * A malformed row is left out, reported once, and kept in the table.
 */
export class DatabaseTaskStore implements TaskStore {
  readonly instanceId: string
  readonly leaseMs: number
  private readonly database: MinatoDatabase
  private readonly logger: Logger
  private readonly writes = new WriteQueue()
  private readonly reported = new Set<string>()
  /** Tasks this instance adopted and has not settled: the ones its heartbeat renews. */
  private readonly owned = new Set<string>()
  private prepared?: Promise<void>
  private detached?: string

  constructor(private readonly options: DatabaseTaskStoreOptions) {
    if (typeof options?.instanceId !== 'string' || !options.instanceId) throw new DoguError('INVALID_OPTIONS', 'DatabaseTaskStore needs an instanceId')
    // The owner column is a 255-character string on SQL databases.
    if (options.instanceId.length > 255) throw new DoguError('INVALID_OPTIONS', `instanceId is ${options.instanceId.length} characters long; at most 255 fit the owner column`)
    const leaseMs = options.leaseMs ?? 30_000
    if (!(leaseMs >= 1) || !Number.isFinite(leaseMs)) throw new DoguError('INVALID_OPTIONS', `leaseMs must be a finite number of milliseconds, 1 or more (got ${JSON.stringify(options.leaseMs)})`)
    this.instanceId = options.instanceId
    this.leaseMs = leaseMs
    this.database = options.database
    this.logger = options.logger ?? silentLogger
  }

  async load(): Promise<BackgroundTask[]> {
    const now = Date.now()
    return (await this.read()).filter(({ row, task }) => task.status !== 'running' || row.owner === this.instanceId || lapsed(row, now)).map(({ task }) => task)
  }

  /**
   * Every valid row as a task. A `running` task whose lease lapsed (its instance stopped
   * renewing it) is declared `interrupted`, written so when it is still running and still
   * lapsed, and returned so.
   */
  async sync(): Promise<BackgroundTask[]> {
    const now = Date.now()
    const tasks: BackgroundTask[] = []
    for (const { row, task } of await this.read()) {
      if (task.status === 'running' && !this.owned.has(task.id) && (row.owner === this.instanceId || lapsed(row, now))) {
        const interrupted: BackgroundTask = Object.freeze({ ...task, status: 'interrupted', settledAt: now })
        await this.put(interrupted)
        tasks.push(interrupted)
      } else {
        tasks.push(task)
      }
    }
    return tasks
  }

  put(task: BackgroundTask): Promise<void> {
    if (task.status === 'running') {
      this.owned.add(task.id)
      return this.writes.push(async () => {
        if (this.dropped(task)) return
        await this.database.upsert(TASK_TABLE, [this.row(task, Date.now() + this.leaseMs)])
      })
    }
    const mine = this.owned.delete(task.id)
    return this.writes.push(async () => {
      if (this.dropped(task)) return
      const now = Date.now()
      // Ours and still running; or, for a task found running at load or sync, one whose
      // lease lapsed (or a previous run of this instance's).
      const query = mine
        ? { id: task.id, status: 'running', owner: this.instanceId }
        : { id: task.id, status: 'running', $or: [{ owner: this.instanceId }, { leaseUntil: { $lt: now } }] }
      // The owner column keeps who ran it, also when another instance declares it interrupted.
      const { id: _, owner: __, ...update } = this.row(task, 0)
      const { matched } = await this.database.set(TASK_TABLE, query, update)
      if (matched) return
      const [row] = await this.database.get(TASK_TABLE, { id: task.id })
      if (!row) await this.database.upsert(TASK_TABLE, [this.row(task, 0)])
      // Another instance recorded the same end first (both saw a lapsed lease): nothing was lost.
      else if (row.status === task.status) this.logger.debug('background task %s was already recorded %s by another instance', task.id, task.status)
      // We thought it cut off (a stale running record, such as one a file store kept from
      // before the database came), but the table knows how it ended: the table is right,
      // and nothing was lost. Only a result the table refuses is worth a warning.
      else if (task.status === 'interrupted' && row.status !== 'running') this.logger.debug('background task %s ended %s before this instance found it running; the table keeps that', task.id, row.status)
      else this.logger.warn('background task %s was not recorded %s here: the table holds it as %s (owner %s)', task.id, task.status, row.status, row.owner)
    })
  }

  delete(ids: readonly string[]): Promise<void> {
    if (!ids.length) return this.flush()
    // Only settled records are evicted; a running row is its owner's.
    return this.writes.push(async () => {
      // Not evicted from a database that is gone: the next instance to read it evicts them.
      if (this.detached !== undefined) return
      await this.database.remove(TASK_TABLE, { id: [...ids], status: { $ne: 'running' } })
    })
  }

  flush(): Promise<void> {
    return this.writes.flush()
  }

  /** The heartbeat: extends the lease of every task this instance runs. Hosts call it every `leaseMs / 3`. */
  renew(): Promise<void> {
    if (!this.owned.size) return this.flush()
    const ids = [...this.owned]
    return this.writes.push(async () => {
      if (this.detached !== undefined) return
      const now = Date.now()
      await this.database.set(TASK_TABLE, { id: ids, status: 'running', owner: this.instanceId }, { leaseUntil: now + this.leaseMs, updatedAt: now })
    })
  }

  /**
   * The database went away (its driver stopped before Dogu, as when the app stops): writes
   * not yet made are dropped instead of failing inside the driver, and reads fail. A task
   * this instance ran that could not be recorded `interrupted` stays `running` in the table
   * under this instance's lease, which is what a killed process leaves: its next start, or
   * another instance once the lease lapses, reads it `interrupted`. Any other record that is
   * dropped (a result) is reported.
   */
  detach(reason: string): void {
    this.detached = reason
  }

  /** Why the table can no longer be reached (see `detach`); `undefined` while it can. */
  get gone(): string | undefined {
    return this.detached
  }

  private dropped(task: BackgroundTask): boolean {
    if (this.detached === undefined) return false
    if (task.status === 'interrupted') this.logger.debug('background task %s stays running in the table %s until its lease lapses: %s', task.id, TASK_TABLE, this.detached)
    else this.logger.warn('background task %s was not recorded %s in the table %s: %s', task.id, task.status, TASK_TABLE, this.detached)
    return true
  }

  private async read(): Promise<{ row: Record<string, unknown>; task: BackgroundTask }[]> {
    if (this.detached !== undefined) throw new Error(`the task table ${TASK_TABLE} cannot be read: ${this.detached}`)
    // A failed preparation (the database was down) is tried again at the next read.
    await (this.prepared ??= this.prepare().catch((error) => {
      this.prepared = undefined
      throw error
    }))
    await this.writes.flush()
    const rows = await this.database.get(TASK_TABLE, {})
    const out: { row: Record<string, unknown>; task: BackgroundTask }[] = []
    for (const row of rows) {
      const task = parseRow(row)
      if (typeof task !== 'string') {
        out.push({ row, task })
        continue
      }
      const seen = `${String(row.id)}\0${String(row.record)}`
      if (this.reported.has(seen)) continue
      this.reported.add(seen)
      this.logger.warn('the task table %s has a malformed row %s: it %s; it is kept in the table and not used', TASK_TABLE, JSON.stringify(row.id), task)
    }
    return out
  }

  private row(task: BackgroundTask, leaseUntil: number): Record<string, unknown> {
    return {
      id: task.id,
      status: task.status,
      owner: this.instanceId,
      leaseUntil,
      sessionId: task.session.id,
      record: JSON.stringify(task),
      updatedAt: Date.now(),
    }
  }

  private async prepare() {
    this.database.extend(TASK_TABLE, FIELDS, { primary: 'id' })
    const path = this.options.migrateFrom
    if (!path || !await fileExists(path)) return
    const tasks = await new JsonFileTaskStore(path, { logger: this.logger }).load()
    // Running records are this instance's: leased to it, so no other instance interrupts
    // them. At a start, the engine reads them as cut off (`interrupted`); when the database
    // appears while they run, it writes them back as running.
    const lease = Date.now() + this.leaseMs
    const rows = tasks.map((task) => this.row(task, task.status === 'running' ? lease : 0))
    if (rows.length) await this.database.upsert(TASK_TABLE, rows)
    const kept = await renameMigrated(path)
    info(this.logger, 'moved %d background task record(s) from %s into the table %s%s', rows.length, path, TASK_TABLE, kept ? `; the file is kept as ${kept}` : '')
  }
}

function lapsed(row: Record<string, unknown>, now: number): boolean {
  return !(typeof row.leaseUntil === 'number' && row.leaseUntil >= now)
}

/** The row's task, or why it is not one. */
function parseRow(row: Record<string, unknown>): BackgroundTask | string {
  if (typeof row.record !== 'string') return 'has no record text'
  let value: unknown
  try {
    value = JSON.parse(row.record)
  } catch (error) {
    return `is not valid JSON (${messageOf(error)})`
  }
  if (!isBackgroundTask(value)) return 'is not a well-formed task record'
  if (value.id !== row.id) return `holds task ${JSON.stringify(value.id)} under another id`
  if (value.status !== row.status) return `has status column ${JSON.stringify(row.status)} but its record says ${JSON.stringify(value.status)}`
  return Object.freeze(value)
}
