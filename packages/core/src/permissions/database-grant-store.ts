import { messageOf } from '../error-message'
import { fileExists, renameMigrated } from '../database/migrated-file'
import type { MinatoDatabase } from '../database/minato-database'
import { WriteQueue } from '../database/write-queue'
import { info, type Logger, silentLogger } from '../logger'
import { type Grant, grantPath } from './grant'
import { type GrantStore, type GrantStoreLoad, isGrant, pickGrant as pick } from './grant-store'
import { JsonFileGrantStore } from './json-file-grant-store'

/** The table `always` grants live in. */
export const GRANT_TABLE = 'dogu_grant'

/** One row per grant: the grant as JSON text, plus columns to find and inspect it by. */
const FIELDS = {
  id: { type: 'string', length: 255 },
  /** The grant's lookup key (subject, permission, target) as JSON: rows of one key are revoked together. */
  key: { type: 'text' },
  permission: { type: 'string', length: 255 },
  record: { type: 'text' },
  updatedAt: { type: 'double' },
}

export interface DatabaseGrantStoreOptions {
  /** A minato database: Koishi's `ctx.database`, or a Cordis 4 app's minato service. */
  database: MinatoDatabase
  /** Where malformed rows and migration are reported. */
  logger?: Logger
  /**
   * A `JsonFileGrantStore` file to move into the table once, at the first load: its grants
   * are written to the table, then the file is renamed `<name>.migrated.json` and kept.
   */
  migrateFrom?: string
}

/**
 * Keeps `always` grants in a minato table (`dogu_grant`), shared by every instance of a bot
 * on that database. Writes are per grant (`add`, `remove`), so instances never overwrite
 * each other's grants; `load()` reads the whole table and is what a refresh calls.
 *
 * A row whose record does not parse, or is not a well-formed `always` grant of its own id,
 * allows nothing: it is left out, reported once (in `problem` and the log), and kept in the
 * table for inspection. The rows around it still apply.
 */
export class DatabaseGrantStore implements GrantStore {
  private readonly database: MinatoDatabase
  private readonly logger: Logger
  private readonly writes = new WriteQueue()
  private readonly reported = new Set<string>()
  private prepared?: Promise<void>
  private detached?: string

  constructor(private readonly options: DatabaseGrantStoreOptions) {
    this.database = options.database
    this.logger = options.logger ?? silentLogger
  }

  async load(): Promise<GrantStoreLoad> {
    if (this.detached !== undefined) throw new Error(`the grant table ${GRANT_TABLE} cannot be read: ${this.detached}`)
    // A failed preparation (the database was down) is tried again at the next read.
    await (this.prepared ??= this.prepare().catch((error) => {
      this.prepared = undefined
      throw error
    }))
    await this.writes.flush()
    const rows = await this.database.get(GRANT_TABLE, {})
    const grants: Grant[] = []
    const bad: string[] = []
    for (const row of rows) {
      const grant = parseRow(row)
      if (typeof grant !== 'string') {
        grants.push(grant)
        continue
      }
      // Reported once per row and content, not on every refresh.
      const seen = `${String(row.id)}\0${String(row.record)}`
      if (this.reported.has(seen)) continue
      this.reported.add(seen)
      bad.push(`row ${JSON.stringify(row.id)} ${grant}`)
    }
    if (!bad.length) return { grants }
    return { grants, problem: { message: `the grant table ${GRANT_TABLE} has malformed rows, kept in the table and not used: ${bad.join('; ')}` } }
  }

  /** Writes the snapshot's grants; rows of other instances are left alone. Use `add` and `remove`. */
  save(grants: readonly Grant[]): Promise<void> {
    return this.writes.push(async () => {
      if (grants.length) await this.database.upsert(GRANT_TABLE, grants.map(toRow))
    })
  }

  /** Stores one new grant. */
  add(grant: Grant): Promise<void> {
    return this.writes.push(async () => {
      if (this.dropped('storing', grant)) return
      await this.database.upsert(GRANT_TABLE, [toRow(grant)])
    })
  }

  /** Removes a grant, and every other row of its key (another instance may have granted the same). */
  remove(grant: Grant): Promise<void> {
    return this.writes.push(async () => {
      if (this.dropped('removing', grant)) return
      await this.database.remove(GRANT_TABLE, { id: grant.id })
      await this.database.remove(GRANT_TABLE, { key: keyOf(grant) })
    })
  }

  /**
   * The database went away (its driver stopped before Dogu, as when the app stops): writes
   * not yet made are dropped with a warning naming each grant, instead of failing inside
   * the driver. Reads fail from now on.
   */
  detach(reason: string): void {
    this.detached = reason
  }

  get gone(): string | undefined {
    return this.detached
  }

  private dropped(action: string, grant: Grant): boolean {
    if (this.detached === undefined) return false
    this.logger.warn('%s grant %s (%s) in the table %s did not happen: %s', action, grant.id, grant.permission, GRANT_TABLE, this.detached)
    return true
  }

  private async prepare() {
    this.database.extend(GRANT_TABLE, FIELDS, { primary: 'id' })
    const path = this.options.migrateFrom
    if (!path || !await fileExists(path)) return
    const { grants, problem } = await new JsonFileGrantStore(path).load()
    if (problem) this.logger.warn('migrating grants: %s', problem.message)
    const always = grants.filter((grant) => grant.scope === 'always')
    if (always.length) await this.database.upsert(GRANT_TABLE, always.map(toRow))
    // Written first, renamed after: a crash in between migrates again, and upserts are idempotent.
    const kept = problem?.movedTo ? undefined : await renameMigrated(path)
    info(this.logger, 'moved %d grant(s) from %s into the table %s%s', always.length, path, GRANT_TABLE, kept ? `; the file is kept as ${kept}` : '')
  }
}

function keyOf(grant: Grant): string {
  return JSON.stringify(grantPath(grant.subject, grant.permission, grant.target))
}

function toRow(grant: Grant): Record<string, unknown> {
  return { id: grant.id, key: keyOf(grant), permission: grant.permission, record: JSON.stringify(grant), updatedAt: Date.now() }
}

/** The row's grant, or why it is not one. */
function parseRow(row: Record<string, unknown>): Grant | string {
  if (typeof row.record !== 'string') return 'has no record text'
  let value: unknown
  try {
    value = JSON.parse(row.record)
  } catch (error) {
    return `is not valid JSON (${messageOf(error)})`
  }
  if (!isGrant(value)) return 'is not a well-formed grant'
  if (value.scope !== 'always') return `holds a "${value.scope}" grant; only "always" grants are stored`
  if (value.id !== row.id) return `holds grant ${JSON.stringify(value.id)} under another id`
  if (keyOf(value) !== row.key) return 'has a key column that does not match its record'
  return pick(value)
}
