import { type Logger, silentLogger } from '../logger'
import { writeFileAtomically } from '../write-file-atomically'
import type { AuditFilter, AuditRecord, AuditRetention } from './audit-record'
import { type AuditStore, selectRecords } from './audit-store'

export interface JsonlAuditStoreOptions {
  logger?: Logger
}

/**
 * Audit records in one file, one JSON record a line (`audit.jsonl`), appended with
 * `O_APPEND`; pruning rewrites the file atomically (a temporary file renamed over it).
 * A line that does not parse (a torn last line after a crash) is skipped and reported,
 * never fatal; the next append starts on a fresh line.
 *
 * Several processes on one file: appends are safe (each batch is one append of whole lines,
 * and `O_APPEND` puts it at the end whoever else writes), and every query reads the file,
 * so each instance sees the others' records. Pruning is not: an instance's rewrite drops what
 * another appended between its read and its rename. Share a file only where losing a few
 * records at a prune is acceptable; the database store (`dogu_audit`) is the multi-instance one.
 * Node-only; `node:fs` is imported lazily so the core still loads in a browser.
 */
export class JsonlAuditStore implements AuditStore {
  private readonly logger: Logger
  /** Whether the file's end is known to be a line's end; unknown until first checked. */
  private freshLine = false
  /** Bad lines already reported, so a query does not report them again. */
  private reported = 0
  /** Lines this instance knows the file holds (read, or appended here), and the oldest one's time. */
  private count = 0
  private oldest = Infinity

  constructor(readonly file: string, options: JsonlAuditStoreOptions = {}) {
    if (typeof file !== 'string' || !file) throw new TypeError('JsonlAuditStore needs a file path')
    this.logger = options.logger ?? silentLogger
  }

  async open(): Promise<void> {
    await this.read()
  }

  async append(records: readonly AuditRecord[]): Promise<void> {
    if (!records.length) return
    const fs = await import('node:fs/promises')
    let text = ''
    for (const record of records) text += JSON.stringify(record) + '\n'
    if (!this.freshLine) {
      // After a torn write the file ends mid-line: start ours on a line of its own.
      if (!(await endsWithNewline(this.file))) text = '\n' + text
      this.freshLine = true
    }
    const { dirname } = await import('node:path')
    await fs.mkdir(dirname(this.file), { recursive: true })
    await fs.appendFile(this.file, text, { encoding: 'utf8', mode: 0o600 })
    this.count += records.length
    for (const record of records) if (record.at < this.oldest) this.oldest = record.at
  }

  async query(filter: AuditFilter): Promise<AuditRecord[]> {
    return selectRecords(await this.read(), filter)
  }

  /**
   * Rewrites the file without what `retention` drops. The file may hold a tenth more than
   * `maxRecords` (and records a little past `maxAgeMs`) between rewrites: a rewrite costs a
   * read of the whole file, so it waits until there is that much to drop.
   */
  async prune(retention: AuditRetention, now = Date.now()): Promise<number> {
    const slack = Math.ceil(retention.maxRecords / 10)
    const cutoff = now - retention.maxAgeMs
    if (this.known && !this.reported && this.count <= retention.maxRecords + slack && this.oldest >= cutoff - retention.maxAgeMs / 10) return 0
    const { lines, bad } = await this.readRaw()
    const young = lines.filter((line) => line.at >= cutoff)
    const keep = young.length > retention.maxRecords ? young.slice(young.length - retention.maxRecords) : young
    this.remember(keep)
    if (keep.length === lines.length && !bad) return 0
    await writeFileAtomically(this.file, keep.map((line) => line.text + '\n').join(''), 0o600)
    this.freshLine = true
    this.reported = 0
    return lines.length - keep.length
  }

  /** Whether `count` and `oldest` were read from the file at least once. */
  private known = false

  private async read(): Promise<AuditRecord[]> {
    const { records, lines } = await this.readLines(true)
    this.remember(lines)
    return records
  }

  private async readRaw() {
    return this.readLines(false)
  }

  private remember(lines: readonly { at: number }[]) {
    this.known = true
    this.count = lines.length
    this.oldest = Infinity
    for (const line of lines) if (line.at < this.oldest) this.oldest = line.at
  }

  /** The file's lines; `parse` also gives the records (else only each line's time, read cheaply). */
  private async readLines(parse: boolean): Promise<{ records: AuditRecord[]; lines: { at: number; text: string }[]; bad: number }> {
    const fs = await import('node:fs/promises')
    let text: string
    try {
      text = await fs.readFile(this.file, 'utf8')
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
      // Lines this store wrote start `{"id":"…","at":<n>,`: a rewrite needs only that.
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
    if (bad > this.reported) {
      this.logger.warn(torn && bad === 1
        ? 'skipped a torn last line of audit log %s (a write cut short); the records before it are intact'
        : 'skipped %d unreadable line(s) of audit log %s', ...(torn && bad === 1 ? [this.file] : [bad, this.file]))
      this.reported = bad
    }
    return { records, lines: good, bad }
  }
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
