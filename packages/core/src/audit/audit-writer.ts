import type { Logger } from '../logger'
import { messageOf } from '../error-message'
import type { Draft } from './audit-draft'
import type { AuditRecord, AuditRetention } from './audit-record'
import type { AuditStore } from './audit-store'
import type { RecordFinisher } from './record-finisher'
import { preparedBatches } from './record-json'

/** A store is pruned at least this often while records are written. */
const PRUNE_INTERVAL = 60 * 60 * 1000

/** Where the writer takes its batches from and gives them back (the log's queue and pool). */
export interface DraftSource {
  /** The next batch: every draft queued (empty when none). */
  take(): Draft[]
  /** The batch was written: its drafts may be reused. */
  written(batch: Draft[]): void
  /** The store refused the batch: it is queued again. */
  failed(batch: Draft[]): void
}

/**
 * Every store operation of one log, in order: batches written, prunes, switches and the
 * close. One pump writes batch after batch while drafts are queued, so what waits for a slow
 * store stays in the log's (bounded) queue, not in a chain of pending writes.
 */
export class AuditWriter {
  /** Resolves once the first store is opened and pruned. */
  readonly ready: Promise<void>
  /** Every operation so far; never rejects. */
  private writing: Promise<void>
  private pumping = false
  /** Store switches asked for and not done: the pump leaves the queue to the new store. */
  private switching = 0
  private failing = false
  private sincePrune = 0
  private lastPrune = 0

  constructor(
    public store: AuditStore,
    readonly finisher: RecordFinisher,
    private readonly retention: Readonly<AuditRetention>,
    private readonly logger: Logger,
    private readonly source: DraftSource,
  ) {
    this.writing = this.opened(store)
    this.ready = this.writing
  }

  /** Starts writing the queue unless a write is under way (it writes the queue too); resolves when it is done. */
  start(queued: boolean): Promise<void> {
    if (queued && !this.pumping) {
      this.pumping = true
      this.writing = this.writing.then(() => this.pump())
    }
    return this.writing
  }

  /** What every operation started so far has done. */
  idle(): Promise<void> {
    return this.writing
  }

  /** Writes already started finish on the old store, which is then closed; the queue goes to the new one. */
  switchTo(store: AuditStore): Promise<void> {
    const previous = this.store
    this.switching++
    this.writing = this.writing.then(async () => {
      try {
        await this.closeStore(previous)
        this.store = store
        await this.opened(store)
      } finally {
        this.switching--
      }
    })
    const switched = this.writing
    // Drafts queued meanwhile go to the new store, whether or not a write was asked for.
    void switched.then(() => { if (!this.switching) this.start(true) })
    return switched
  }

  close(): Promise<void> {
    this.writing = this.writing.then(() => this.closeStore(this.store))
    return this.writing
  }

  private async pump(): Promise<void> {
    try {
      while (!this.switching) {
        const batch = this.source.take()
        if (!batch.length || !(await this.write(batch))) break
      }
    } finally {
      this.pumping = false
    }
  }

  /** Writes one batch; false when the store refused it (the log keeps it for the next). */
  private async write(batch: Draft[]): Promise<boolean> {
    const records: AuditRecord[] = []
    const argsJson: (string | undefined)[] = []
    const fromDraft: boolean[] = []
    for (const draft of batch) {
      try {
        if (!draft.record) {
          const record = this.finisher.finish(draft)
          draft.record = record instanceof Promise ? await record : record
        }
        records.push(draft.record)
        argsJson.push(draft.argsJson)
        fromDraft.push(draft.preset === undefined)
      } catch (error) {
        this.logger.warn('dropped an audit record of %s (%s): %s', draft.tool, draft.callId, messageOf(error))
      }
    }
    if (!records.length) return true
    // What finishing made and knows: a file store writes the lines from it.
    preparedBatches.set(records, { argsJson, fromDraft })
    const store = this.store
    try {
      await store.append(records)
      if (this.failing) this.logger.warn('audit records are written again')
      this.failing = false
      this.sincePrune += records.length
    } catch (error) {
      if (!this.failing) this.logger.warn('could not write %d audit record(s); they are kept to retry: %s', records.length, messageOf(error))
      this.failing = true
      this.source.failed(batch)
      return false
    }
    this.source.written(batch)
    if (this.sincePrune >= Math.max(1, Math.ceil(this.retention.maxRecords / 10)) || Date.now() - this.lastPrune >= PRUNE_INTERVAL) {
      await this.prune(store)
    }
    return true
  }

  private async opened(store: AuditStore): Promise<void> {
    try {
      await store.open?.()
    } catch (error) {
      this.logger.warn('could not open the audit store: %s', messageOf(error))
    }
    await this.prune(store)
  }

  private async prune(store: AuditStore): Promise<void> {
    this.sincePrune = 0
    this.lastPrune = Date.now()
    try {
      await store.prune(this.retention)
    } catch (error) {
      this.logger.warn('could not prune the audit store: %s', messageOf(error))
    }
  }

  private async closeStore(store: AuditStore): Promise<void> {
    try {
      await store.close?.()
    } catch (error) {
      this.logger.warn('could not close the audit store: %s', messageOf(error))
    }
  }
}
