import { type Logger, silentLogger } from '../logger'
import { writeFileAtomically } from '../write-file-atomically'
import type { AuditFilter, AuditRecord, AuditRetention } from './audit-record'
import { type AuditStore, isEarly, retained, selectRecords } from './audit-store'
import { distinct, type Line, nodeFs, type NodeFs, readLines, endsWithNewline, type FileLines } from './jsonl-lines'
import { finishedLine, lineOf, preparedBatches } from './record-json'
import { keepNewest } from './retention-order'

export interface JsonlAuditStoreOptions {
  logger?: Logger
}

/**
 * Audit records in JSON Lines (`audit.jsonl`), one record a line, appended with `O_APPEND`.
 * Retention never rewrites the file on the way: once it holds `maxRecords` lines it is
 * renamed to `audit.jsonl.1` (replacing the previous one) and a new file begins, so the two
 * hold between `maxRecords` and twice that, and queries return exactly what the retention
 * keeps. Where that would drop records of authorized or asked calls from `.1` while the live
 * file holds `early` ones (calls nobody authorized), the rotation writes `.1` anew instead:
 * the `maxRecords` records the retention keeps, early ones going first (the live file is
 * renamed `audit.jsonl.rotating` meanwhile, and a rotation cut short is finished on the next).
 * Only records past `maxAgeMs` in the live file make it be rewritten (atomically),
 * once they are a tenth of `maxAgeMs` past; a `.1` file wholly past it is deleted.
 * A line that does not parse (a torn last line after a crash) is skipped and reported,
 * never fatal; the next append starts on a fresh line.
 *
 * Several processes on one file: appends are safe (each batch is one append of whole lines,
 * and `O_APPEND` puts it at the end whoever else writes), and every query reads the files,
 * so each instance sees the others' records. Rotation and rewrites are not coordinated: two
 * instances rotating at once can drop a file's worth. Share a file only where that is
 * acceptable; the database store (`dogu_audit`) is the multi-instance one.
 * Appends and rotations are synchronous (one `write(2)` of the batch, to the page cache, no
 * fsync): they finish without the event loop, so calls that never yield to it cannot pile
 * records up behind a write, and a batch costs no promise round trips.
 * Node-only; `node:fs` is imported lazily so the core still loads in a browser.
 */
export class JsonlAuditStore implements AuditStore {
  private readonly logger: Logger
  /** The previous file, renamed at rotation. */
  readonly rotated: string
  /** The live file while a rotation that keeps records of `.1` merges it into `.1`. */
  readonly rotating: string
  /**
   * Where a rotation moves the `.1` it replaces (`<file>.discarded.<n>`), until the thread
   * pool deletes it: a name per rotation, so a rotation never renames over a replaced file
   * not yet deleted (that frees it on the event loop, as calls that never yield would make it).
   */
  private discards = 0
  /** A `.rotating` file was found: a merge was cut short, and the next prune finishes it. */
  private leftover = false
  /** Whether the file's end is known to be a line's end; unknown until first checked. */
  private freshLine = false
  /** Bad lines already reported, per file, so a query does not report them again. */
  private reported = new Map<string, number>()
  /** Lines this instance knows the live file holds (read, or appended here), and the oldest one's time. */
  private count = 0
  /** Of those, the `early` ones. */
  private liveEarly = 0
  private oldest = Infinity
  private newest = -Infinity
  /** What the rotated file holds: its lines and its newest record's time (`-Infinity` when none). */
  private rotatedCount = 0
  private rotatedEarly = 0
  private folderMade = false
  private fs: NodeFs | undefined
  private rotatedNewest = -Infinity
  /** Whether the files were read at least once (every count above is known then). */
  private known = false
  /** The retention the log prunes with, once it has: queries apply it too. */
  private retention?: AuditRetention

  constructor(readonly file: string, options: JsonlAuditStoreOptions = {}) {
    if (typeof file !== 'string' || !file) throw new TypeError('JsonlAuditStore needs a file path')
    this.logger = options.logger ?? silentLogger
    this.rotated = `${file}.1`
    this.rotating = `${file}.rotating`
  }

  async open(): Promise<void> {
    await this.read()
    // Replaced `.1` files a stop left behind: their records were dropped by the retention already.
    const fs = this.fs ?? (this.fs = await nodeFs())
    const slash = Math.max(this.file.lastIndexOf('/'), this.file.lastIndexOf('\\'))
    const folder = this.file.slice(0, slash + 1) || '.'
    const prefix = `${this.file.slice(slash + 1)}.discarded`
    let names: string[] = []
    try {
      names = await fs.promises.readdir(folder)
    } catch {}
    for (const name of names) if (name.startsWith(prefix)) this.discard(this.file.slice(0, slash + 1) + name)
  }

  async append(records: readonly AuditRecord[]): Promise<void> {
    if (!records.length) return
    const fs = this.fs ?? (this.fs = await nodeFs())
    const prepared = preparedBatches.get(records)
    let text = ''
    if (prepared) {
      const { argsJson, fromDraft } = prepared
      for (let i = 0; i < records.length; i++) text += (fromDraft[i] ? finishedLine(records[i], argsJson[i]) : lineOf(records[i], argsJson[i])) + '\n'
    } else for (let i = 0; i < records.length; i++) text += lineOf(records[i]) + '\n'
    if (!this.freshLine) {
      // After a torn write the file ends mid-line: start ours on a line of its own.
      if (!endsWithNewline(fs, this.file)) text = '\n' + text
      this.freshLine = true
    }
    // The folder is made once, not per batch (a syscall per batch); made again if it went.
    if (!this.folderMade) this.makeFolder(fs)
    try {
      fs.appendFileSync(this.file, text, { encoding: 'utf8', mode: 0o600 })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      this.makeFolder(fs)
      fs.appendFileSync(this.file, text, { encoding: 'utf8', mode: 0o600 })
    }
    this.count += records.length
    for (const record of records) {
      if (record.early === true) this.liveEarly++
      if (record.at < this.oldest) this.oldest = record.at
      if (record.at > this.newest) this.newest = record.at
    }
  }

  private makeFolder(fs: NodeFs): void {
    fs.mkdirSync(this.file.slice(0, Math.max(this.file.lastIndexOf('/'), this.file.lastIndexOf('\\')) + 1) || '.', { recursive: true })
    this.folderMade = true
  }

  async query(filter: AuditFilter): Promise<AuditRecord[]> {
    const records = await this.read()
    // The files hold more than the retention keeps between rotations; readers never see it.
    return selectRecords(this.retention ? retained(records, this.retention) : records, filter)
  }

  /**
   * Applies `retention`: rotates the live file once it holds `maxRecords` lines (merging it
   * into `.1` where a plain rotation would drop authorized records before early ones), deletes
   * a rotated file wholly past `maxAgeMs`, and rewrites the live file only when its oldest
   * record is a tenth of `maxAgeMs` past it. Resolves with how many records went.
   */
  async prune(retention: AuditRetention, now = Date.now()): Promise<number> {
    this.retention = retention
    if (!this.known) await this.read()
    const fs = this.fs ?? (this.fs = await nodeFs())
    const cutoff = now - retention.maxAgeMs
    let removed = 0
    if (this.leftover) removed += await this.merge(retention.maxRecords)
    if (this.count >= retention.maxRecords) {
      if (this.rotatedCount > this.rotatedEarly && this.count - this.liveEarly < retention.maxRecords) {
        // `.1` holds authorized records the retention keeps over the live file's early ones.
        this.detachLive(fs, this.rotating)
        this.leftover = true
        removed += await this.merge(retention.maxRecords)
      } else {
        // The file being replaced: the records it held are the ones rotation drops (the live
        // file holds `maxRecords` authorized ones, or `.1` none).
        removed += this.rotatedCount
        const early = this.liveEarly
        const newest = this.newest
        const moved = this.count
        // Renaming over a full `.1` frees its blocks inside the call (about 1.4 ms for 1.5 MB
        // here), on the event loop; moved aside first, it is freed by the thread pool.
        if (this.rotatedCount) this.setAside(fs)
        this.detachLive(fs, this.rotated)
        this.rotatedCount = moved
        this.rotatedEarly = early
        this.rotatedNewest = newest
      }
    }
    // Known from the last read or rotation: the rotated file is not read again.
    if (this.rotatedCount && this.rotatedNewest < cutoff) {
      fs.rmSync(this.rotated, { force: true })
      removed += this.rotatedCount
      this.rotatedCount = 0
      this.rotatedNewest = -Infinity
    }
    if (this.oldest < cutoff - retention.maxAgeMs / 10 || this.reported.get(this.file)) {
      const { lines, bad } = await this.readLines(this.file, false)
      const keep = lines.filter((line) => line.at >= cutoff)
      if (keep.length < lines.length || bad) {
        await writeFileAtomically(this.file, keep.map((line) => line.text + '\n').join(''), 0o600)
        this.freshLine = true
        this.reported.delete(this.file)
        removed += lines.length - keep.length
      }
      this.remember(keep)
    }
    return removed
  }

  /** Moves the full `.1` aside, to be deleted in the background. */
  private setAside(fs: NodeFs): void {
    const discarded = `${this.file}.discarded.${this.discards++}`
    try {
      fs.renameSync(this.rotated, discarded)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      return
    }
    this.discard(discarded)
  }

  /** Deletes a set-aside `.1` in the background; a failure is only logged. */
  private discard(file: string): void {
    const fs = this.fs!
    fs.promises.rm(file, { force: true }).catch((error: unknown) => {
      this.logger.warn('cannot delete %s: %s', file, error)
    })
  }

  private detachLive(fs: NodeFs, to: string): void {
    try {
      fs.renameSync(this.file, to)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
    this.count = 0
    this.liveEarly = 0
    this.oldest = Infinity
    this.newest = -Infinity
    this.freshLine = true
    this.reported.delete(this.file)
  }

  /**
   * Writes `.1` anew from `.1` and `.rotating`: the `max` records the retention keeps of
   * them, early ones going first, in their order; then deletes `.rotating`. Written before
   * the delete, so a crash between leaves duplicates (read once, by id), never a loss.
   */
  private async merge(max: number): Promise<number> {
    const fs = await nodeFs()
    const older = await this.readLines(this.rotated, false)
    const newer = await this.readLines(this.rotating, false)
    const lines = distinct([...older.lines, ...newer.lines])
    const kept = keepNewest(lines, max, isEarly)
    await writeFileAtomically(this.rotated, kept.map((line) => line.text + '\n').join(''), 0o600)
    await fs.promises.rm(this.rotating, { force: true })
    this.reported.delete(this.rotated)
    this.reported.delete(this.rotating)
    this.leftover = false
    this.rotatedCount = kept.length
    this.rotatedEarly = 0
    this.rotatedNewest = -Infinity
    for (const line of kept) {
      if (line.early) this.rotatedEarly++
      if (line.at > this.rotatedNewest) this.rotatedNewest = line.at
    }
    return older.lines.length + newer.lines.length - kept.length
  }

  /** Every record of the files, oldest first; remembers what each holds. */
  private async read(): Promise<AuditRecord[]> {
    const previous = await this.readLines(this.rotated, true)
    // Left by a merge cut short: between `.1` and the live file in age, perhaps also in `.1`.
    const merging = await this.readLines(this.rotating, true)
    this.leftover = merging.lines.length > 0
    const live = await this.readLines(this.file, true)
    this.remember(live.lines)
    this.rotatedCount = previous.lines.length
    this.rotatedEarly = 0
    this.rotatedNewest = -Infinity
    for (const line of previous.lines) {
      if (line.early) this.rotatedEarly++
      if (line.at > this.rotatedNewest) this.rotatedNewest = line.at
    }
    if (this.leftover) return distinct([...previous.records, ...merging.records, ...live.records])
    return previous.records.length ? [...previous.records, ...live.records] : live.records
  }

  private remember(lines: readonly Line[]) {
    this.known = true
    this.count = lines.length
    this.liveEarly = 0
    this.oldest = Infinity
    this.newest = -Infinity
    for (const line of lines) {
      if (line.early) this.liveEarly++
      if (line.at < this.oldest) this.oldest = line.at
      if (line.at > this.newest) this.newest = line.at
    }
  }

  private readLines(file: string, parse: boolean): Promise<FileLines> {
    return readLines(file, parse, this.reported, this.logger)
  }
}
