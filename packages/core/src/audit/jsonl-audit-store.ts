import { type Logger, silentLogger } from '../logger'
import { writeFileAtomically } from '../write-file-atomically'
import type { AuditFilter, AuditRecord, AuditRetention } from './audit-record'
import { type AuditStore, retained, selectRecords } from './audit-store'

export interface JsonlAuditStoreOptions {
  logger?: Logger
}

/**
 * Audit records in JSON Lines (`audit.jsonl`), one record a line, appended with `O_APPEND`.
 * Retention never rewrites the file on the way: once it holds `maxRecords` lines it is
 * renamed to `audit.jsonl.1` (replacing the previous one) and a new file begins, so the two
 * hold between `maxRecords` and twice that, and queries return exactly what the retention
 * keeps. Only records past `maxAgeMs` in the live file make it be rewritten (atomically),
 * once they are a tenth of `maxAgeMs` past; a `.1` file wholly past it is deleted.
 * A line that does not parse (a torn last line after a crash) is skipped and reported,
 * never fatal; the next append starts on a fresh line.
 *
 * Several processes on one file: appends are safe (each batch is one append of whole lines,
 * and `O_APPEND` puts it at the end whoever else writes), and every query reads the files,
 * so each instance sees the others' records. Rotation and rewrites are not coordinated: two
 * instances rotating at once can drop a file's worth. Share a file only where that is
 * acceptable; the database store (`dogu_audit`) is the multi-instance one.
 * Node-only; `node:fs` is imported lazily so the core still loads in a browser.
 */
export class JsonlAuditStore implements AuditStore {
  private readonly logger: Logger
  /** The previous file, renamed at rotation. */
  readonly rotated: string
  /** Whether the file's end is known to be a line's end; unknown until first checked. */
  private freshLine = false
  /** Bad lines already reported, per file, so a query does not report them again. */
  private reported = new Map<string, number>()
  /** Lines this instance knows the live file holds (read, or appended here), and the oldest one's time. */
  private count = 0
  private oldest = Infinity
  private newest = -Infinity
  /** What the rotated file holds: its lines and its newest record's time (`-Infinity` when none). */
  private rotatedCount = 0
  private folderMade = false
  private rotatedNewest = -Infinity
  /** Whether the files were read at least once (every count above is known then). */
  private known = false
  /** The retention the log prunes with, once it has: queries apply it too. */
  private retention?: AuditRetention

  constructor(readonly file: string, options: JsonlAuditStoreOptions = {}) {
    if (typeof file !== 'string' || !file) throw new TypeError('JsonlAuditStore needs a file path')
    this.logger = options.logger ?? silentLogger
    this.rotated = `${file}.1`
  }

  async open(): Promise<void> {
    await this.read()
  }

  async append(records: readonly AuditRecord[]): Promise<void> {
    if (!records.length) return
    const fs = await import('node:fs/promises')
    let text = ''
    for (const record of records) text += lineOf(record) + '\n'
    if (!this.freshLine) {
      // After a torn write the file ends mid-line: start ours on a line of its own.
      if (!(await endsWithNewline(this.file))) text = '\n' + text
      this.freshLine = true
    }
    // The folder is made once, not per batch (a syscall per batch); made again if it went.
    if (!this.folderMade) await this.makeFolder()
    try {
      await fs.appendFile(this.file, text, { encoding: 'utf8', mode: 0o600 })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      await this.makeFolder()
      await fs.appendFile(this.file, text, { encoding: 'utf8', mode: 0o600 })
    }
    this.count += records.length
    for (const record of records) {
      if (record.at < this.oldest) this.oldest = record.at
      if (record.at > this.newest) this.newest = record.at
    }
  }

  private async makeFolder(): Promise<void> {
    const [fs, { dirname }] = await Promise.all([import('node:fs/promises'), import('node:path')])
    await fs.mkdir(dirname(this.file), { recursive: true })
    this.folderMade = true
  }

  async query(filter: AuditFilter): Promise<AuditRecord[]> {
    const records = await this.read()
    // The files hold more than the retention keeps between rotations; readers never see it.
    return selectRecords(this.retention ? retained(records, this.retention) : records, filter)
  }

  /**
   * Applies `retention`: rotates the live file once it holds `maxRecords` lines, deletes a
   * rotated file wholly past `maxAgeMs`, and rewrites the live file only when its oldest
   * record is a tenth of `maxAgeMs` past it. Resolves with how many records went.
   */
  async prune(retention: AuditRetention, now = Date.now()): Promise<number> {
    this.retention = retention
    if (!this.known) await this.read()
    const fs = await import('node:fs/promises')
    const cutoff = now - retention.maxAgeMs
    let removed = 0
    if (this.count >= retention.maxRecords) {
      // The file being replaced: the records it held are the ones rotation drops.
      removed += this.rotatedCount
      await fs.rename(this.file, this.rotated).catch((error: NodeJS.ErrnoException) => { if (error.code !== 'ENOENT') throw error })
      this.rotatedCount = this.count
      this.rotatedNewest = this.newest
      this.count = 0
      this.oldest = Infinity
      this.newest = -Infinity
      this.freshLine = true
      this.reported.delete(this.file)
    }
    // Known from the last read or rotation: the rotated file is not read again.
    if (this.rotatedCount && this.rotatedNewest < cutoff) {
      await fs.rm(this.rotated, { force: true })
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

  /** Every record of both files, oldest first; remembers what each holds. */
  private async read(): Promise<AuditRecord[]> {
    const previous = await this.readLines(this.rotated, true)
    const live = await this.readLines(this.file, true)
    this.remember(live.lines)
    this.rotatedCount = previous.lines.length
    this.rotatedNewest = -Infinity
    for (const line of previous.lines) if (line.at > this.rotatedNewest) this.rotatedNewest = line.at
    return previous.records.length ? [...previous.records, ...live.records] : live.records
  }

  private remember(lines: readonly { at: number }[]) {
    this.known = true
    this.count = lines.length
    this.oldest = Infinity
    this.newest = -Infinity
    for (const line of lines) {
      if (line.at < this.oldest) this.oldest = line.at
      if (line.at > this.newest) this.newest = line.at
    }
  }

  /** A file's lines; `parse` also gives the records (else only each line's time, read cheaply). */
  private async readLines(file: string, parse: boolean): Promise<{ records: AuditRecord[]; lines: { at: number; text: string }[]; bad: number }> {
    const fs = await import('node:fs/promises')
    let text: string
    try {
      text = await fs.readFile(file, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], lines: [], bad: 0 }
      throw error
    }
    const lines = text.split('\n')
    const records: AuditRecord[] = []
    const good: { at: number; text: string }[] = []
    let bad = 0
    let torn = false
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]
      if (!line.trim()) continue
      // Lines this store wrote start `{"id":"…","at":<n>,`: retention needs only that.
      const head = parse ? null : HEAD.exec(line)
      if (head && line.endsWith('}')) {
        good.push({ at: Number(head[1]), text: line })
        continue
      }
      try {
        const record = JSON.parse(line)
        if (record && typeof record === 'object' && typeof record.at === 'number' && typeof record.tool === 'string') {
          records.push(record)
          good.push({ at: record.at, text: line })
          continue
        }
      } catch {}
      bad++
      // The last line with no newline after it: a write cut short.
      if (i === lines.length - 1) torn = true
    }
    if (bad > (this.reported.get(file) ?? 0)) {
      this.logger.warn(torn && bad === 1
        ? 'skipped a torn last line of audit log %s (a write cut short); the records before it are intact'
        : 'skipped %d unreadable line(s) of audit log %s', ...(torn && bad === 1 ? [file] : [bad, file]))
      this.reported.set(file, bad)
    }
    return { records, lines: good, bad }
  }
}

/** JSON of the objects records share (a session's caller, a rule's decider), made once each. */
const sharedJson = new WeakMap<object, string>()
/** `,"key":` for each key seen. */
const keyJson = new Map<string, string>()

/**
 * A record's line: `JSON.stringify(record)`, to the byte, but the objects records share
 * (`caller`, `decided`: the log makes one per session and per rule) are serialized once
 * rather than per record, which halves the cost of a line. Records are plain JSON data.
 */
function lineOf(record: AuditRecord): string {
  let line = ''
  for (const key in record) {
    const value = (record as unknown as Record<string, unknown>)[key]
    if (value === undefined || typeof value === 'function') continue
    let json: string
    if (typeof value === 'number') json = Number.isFinite(value) ? String(value) : 'null'
    else if ((key === 'caller' || key === 'decided') && value && typeof value === 'object') {
      json = sharedJson.get(value)!
      if (json === undefined) sharedJson.set(value, json = JSON.stringify(value))
    } else json = JSON.stringify(value)
    let head = keyJson.get(key)
    if (head === undefined) keyJson.set(key, head = `,${JSON.stringify(key)}:`)
    line += line ? head + json : `{${head.slice(1)}${json}`
  }
  return line ? `${line}}` : '{}'
}

const HEAD = /^\{"id":"[^"\\]*","at":(\d+),/

async function endsWithNewline(file: string): Promise<boolean> {
  const fs = await import('node:fs/promises')
  let handle
  try {
    handle = await fs.open(file, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true
    throw error
  }
  try {
    const { size } = await handle.stat()
    if (!size) return true
    const byte = Buffer.alloc(1)
    await handle.read(byte, 0, 1, size - 1)
    return byte[0] === 0x0a
  } finally {
    await handle.close()
  }
}
