import { messageOf } from '../error-message'
import { writeFileAtomically } from '../write-file-atomically'
import type { PendingRecord, PendingStore, PendingStoreLoad } from './pending-record'
import { pickRecord, recordProblem, sessionOf } from './pending-record-check'

const VERSION = 1
/** Operations in flight per file, across store instances: an engine started after another reads what it wrote. */
const queues = new Map<string, Promise<void>>()

type Entries = unknown[]

/** A change waiting for its turn: applied with the others queued beside it. */
interface QueuedChange {
  change: (entries: Entries) => Entries | undefined
  resolve: () => void
  reject: (error: unknown) => void
}

/**
 * Pending requests in a JSON file (`{ "version": 1, "requests": [...] }`), for one instance:
 * the file beside the grants when no database is loaded. Every change reads the file, changes
 * it and writes it atomically (a temporary file flushed and renamed over it), readable by the
 * owner only (0600); changes to one file run one after another in the process, in the order
 * asked, so a claim is won by exactly one claimant. Changes asked while a write is under way
 * are applied together, with one read and one write. Two processes must not share a file: use the database store.
 *
 * A file that does not parse, or is not a version 1 store, is renamed to
 * `<path>.corrupt-<time>` and reported (`bad`); none of its requests are asked again. A
 * single request that does not read as one is reported and left out, and the engine removes
 * it; the others are asked again. A file that exists and cannot be read is reported and not
 * written over: requests asked meanwhile are not kept.
 *
 * Node's `fs` is imported on first use, so importing `@dogu/core` stays browser-safe.
 */
export class JsonFilePendingStore implements PendingStore {
  /** Set when the file exists but could not be read: writing would overwrite what we never saw. */
  private unreadable?: string
  /**
   * Changes asked and not yet applied. While one write is on disk, every change asked
   * meanwhile waits here, and the next turn applies them all to one read and writes once: a
   * burst of asks (each a put, each answer a remove) costs a few writes, not one per change.
   */
  private queued?: QueuedChange[]

  constructor(readonly path: string) {}

  load(): Promise<PendingStoreLoad> {
    return this.inTurn(async () => {
      const read = await this.read()
      if ('bad' in read) return { records: [], bad: [read.bad] }
      const records: PendingRecord[] = []
      const bad: PendingStoreLoad['bad'] = []
      let anonymous = false
      read.entries.forEach((entry, index) => {
        const problem = recordProblem(entry)
        if (!problem) {
          const record = pickRecord(entry as PendingRecord)
          if (record.claimedBy === undefined) records.push(record)
          return
        }
        const id = typeof (entry as { id?: unknown })?.id === 'string' ? (entry as { id: string }).id : undefined
        const session = sessionOf(entry)
        if (id === undefined) anonymous = true
        bad.push({ ...(id !== undefined ? { id } : {}), why: `requests[${index}] in ${this.path} ${problem}`, ...(session ? { session } : {}) })
      })
      // An entry without an id cannot be removed by one: it goes now, once reported.
      if (anonymous) await this.write(read.entries.filter((entry) => typeof (entry as { id?: unknown })?.id === 'string'))
      return { records: records.sort((a, b) => a.createdAt - b.createdAt), bad }
    })
  }

  async put(record: PendingRecord): Promise<void> {
    // Serialized before the turn: what JSON cannot hold fails this put, not the file.
    const entry = JSON.parse(JSON.stringify(record)) as PendingRecord
    return this.change((entries) => [...entries.filter((item) => idOf(item) !== record.id), entry])
  }

  remove(id: string): Promise<void> {
    return this.change((entries) => entries.some((item) => idOf(item) === id) ? entries.filter((item) => idOf(item) !== id) : undefined)
  }

  async claim(id: string, instance: string, by: string): Promise<boolean> {
    let won = false
    await this.change((entries) => {
      const index = entries.findIndex((item) => idOf(item) === id)
      const entry = entries[index] as PendingRecord | undefined
      if (!entry || recordProblem(entry) || entry.claimedBy !== undefined) return undefined
      won = true
      const next = [...entries]
      next[index] = { ...entry, claimedBy: instance, claimedFor: by }
      return next
    })
    return won
  }

  get(id: string): Promise<PendingRecord | undefined> {
    return this.inTurn(async () => {
      const read = await this.read()
      if ('bad' in read) return undefined
      const entry = read.entries.find((item) => idOf(item) === id)
      return entry === undefined || recordProblem(entry) ? undefined : pickRecord(entry as PendingRecord)
    })
  }

  /**
   * Reads the file, applies `change` (undefined: nothing to write) and writes the result,
   * together with the changes queued beside it (`queued`): each is applied in turn to what
   * the one before it left, and all settle once the one write is on disk, or fail with it.
   */
  private change(change: (entries: Entries) => Entries | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.queued) return void this.queued.push({ change, resolve, reject })
      const batch: QueuedChange[] = [{ change, resolve, reject }]
      this.queued = batch
      void this.inTurn(() => {
        // From here on, a new change starts the next batch.
        this.queued = undefined
        return this.apply(batch)
      }).catch(() => {})
    })
  }

  private async apply(batch: QueuedChange[]): Promise<void> {
    const failAll = (error: unknown) => { for (const item of batch) item.reject(error) }
    if (this.unreadable) return failAll(new Error(`not writing to the pending store ${this.path}: ${this.unreadable}`))
    let read: Awaited<ReturnType<JsonFilePendingStore['read']>>
    try {
      read = await this.read()
    } catch (error) {
      return failAll(error)
    }
    if ('bad' in read) return failAll(new Error(`not writing to the pending store ${this.path}: ${read.bad.why}`))
    let entries = read.entries
    // The changes the write carries fail with it; one that changed nothing has its answer already.
    const written: QueuedChange[] = []
    const unchanged: QueuedChange[] = []
    for (const item of batch) {
      let next: Entries | undefined
      try {
        next = item.change(entries)
      } catch (error) {
        item.reject(error)
        continue
      }
      if (next) {
        entries = next
        written.push(item)
      } else {
        unchanged.push(item)
      }
    }
    for (const item of unchanged) item.resolve()
    if (!written.length) return
    try {
      await this.write(entries)
    } catch (error) {
      for (const item of written) item.reject(error)
      return
    }
    for (const item of written) item.resolve()
  }

  /** The file's entries (none when it does not exist), or why it cannot be used; a corrupt file is moved aside. */
  private async read(): Promise<{ entries: Entries } | { bad: PendingStoreLoad['bad'][number] }> {
    const fs = await import('node:fs/promises')
    let text: string
    try {
      text = await fs.readFile(this.path, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { entries: [] }
      this.unreadable = `it could not be read (${messageOf(error)})`
      return { bad: { why: `cannot read the pending store ${this.path} (${messageOf(error)}); its requests are not asked again, and new ones are not kept` } }
    }
    let data: { version?: unknown; requests?: unknown }
    try {
      data = JSON.parse(text)
    } catch (error) {
      return this.moveAside(fs, `it is not valid JSON (${messageOf(error)})`)
    }
    if (!data || typeof data !== 'object' || data.version !== VERSION || !Array.isArray(data.requests)) {
      return this.moveAside(fs, `it is not a version ${VERSION} pending store`)
    }
    return { entries: data.requests }
  }

  private async write(entries: Entries): Promise<void> {
    const text = JSON.stringify({ version: VERSION, requests: entries }, null, 2) + '\n'
    // A request names who asked for what, where: readable by the owner only.
    await writeFileAtomically(this.path, text, 0o600)
  }

  private async moveAside(fs: typeof import('node:fs/promises'), why: string): Promise<{ bad: PendingStoreLoad['bad'][number] }> {
    const movedTo = `${this.path}.corrupt-${Date.now()}`
    try {
      await fs.rename(this.path, movedTo)
    } catch (error) {
      this.unreadable = `it is corrupt and could not be moved aside (${messageOf(error)})`
      return { bad: { why: `the pending store ${this.path} is corrupt: ${why}; moving it aside failed (${messageOf(error)}), so none of its requests are asked again and new ones are not kept` } }
    }
    return { bad: { why: `the pending store ${this.path} is corrupt: ${why}; it was moved to ${movedTo} and none of its requests are asked again` } }
  }

  private inTurn<T>(run: () => Promise<T>): Promise<T> {
    const previous = queues.get(this.path) ?? Promise.resolve()
    const next = previous.then(run)
    const tail = next.then(() => {}, () => {})
    queues.set(this.path, tail)
    void tail.then(() => { if (queues.get(this.path) === tail) queues.delete(this.path) })
    return next
  }
}

function idOf(entry: unknown): unknown {
  return entry && typeof entry === 'object' ? (entry as { id?: unknown }).id : undefined
}
