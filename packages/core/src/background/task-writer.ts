import type { Logger } from '../logger'
import type { BackgroundTask } from './background-task'
import type { TaskStore } from './task-store'

/**
 * Writes a background engine's changes to its store. A store failure must not break a
 * call: it is reported, and memory stays authoritative. While a store switch reads the
 * new store, writes are held: the ids are noted and written once it is read.
 */
export class TaskWriter {
  private held: Set<string> | undefined

  constructor(
    /** Where records go now; a switch replaces it. */
    public store: TaskStore,
    private readonly logger: Logger,
    /** The record as it is now, for a write the previous store lost. */
    private readonly current: (id: string) => BackgroundTask | undefined,
  ) {}

  /** Writes a record, or notes it while writes are held. */
  put(task: BackgroundTask): void {
    if (this.held) return void this.held.add(task.id)
    const { store } = this
    this.guard(() => store.put(task), 'writing to', () => {
      // A write the old store lost as it went (a database stopping): the record goes to the current one.
      if (store === this.store) return false
      const current = this.current(task.id)
      this.logger.debug('writing task %s to the previous store failed as it went; writing it to the current one', task.id)
      if (current) this.put(current)
      return true
    })
  }

  /** Deletes evicted records, or notes them while writes are held. */
  delete(ids: readonly string[]): void {
    if (this.held) {
      for (const id of ids) this.held.add(id)
      return
    }
    this.guard(() => this.store.delete(ids), 'evicting from')
  }

  /** Holds writes from now on, starting with `ids`; returns the set of ids noted. */
  hold(ids: Iterable<string>): Set<string> {
    return this.held = new Set(ids)
  }

  /** Ends holding writes; what was noted is the caller's to write. */
  release(): void {
    this.held = undefined
  }

  private guard(write: () => Promise<void>, action: string, recovered?: () => boolean) {
    const report = (error: unknown) => {
      if (!recovered?.()) this.logger.warn('%s the background task store failed: %s', action, error)
    }
    try {
      write().catch(report)
    } catch (error) {
      report(error)
    }
  }
}
