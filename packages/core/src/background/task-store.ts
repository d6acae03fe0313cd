import { DoguError } from '../errors'
import type { BackgroundTask } from './background-task'

/**
 * Where task records persist. The engine calls `load` once, before anything else, then
 * `put` for every new or changed record and `delete` for evicted ones, without awaiting
 * them in between; a store applies them in call order. A database-backed store implements
 * the same four methods.
 */
export interface TaskStore {
  /** Every stored record. Records that fail `isBackgroundTask` are the store's to report. */
  load(): Promise<BackgroundTask[]>
  /** Inserts or replaces a record. */
  put(task: BackgroundTask): Promise<void>
  /** Removes records; unknown ids are ignored. */
  delete(ids: readonly string[]): Promise<void>
  /** Settles once every earlier `put` and `delete` is stored. */
  flush(): Promise<void>
  /**
   * Optional, for a store several instances share: every record as it stands now,
   * including tasks other instances run. `BackgroundEngine.refresh` merges them.
   */
  sync?(): Promise<BackgroundTask[]>
  /**
   * Optional: why the store can no longer be read (its database stopped), once it is so. A
   * read failing then is what a stopping app does, not a problem to report.
   */
  readonly gone?: string
}

/** A store that forgets everything with the process: for tests and hosts without disk. */
export class MemoryTaskStore implements TaskStore {
  private records = new Map<string, BackgroundTask>()

  /** Optionally seeded, e.g. with what a previous engine left behind. */
  constructor(tasks: Iterable<BackgroundTask> = []) {
    for (const task of tasks) this.records.set(task.id, task)
  }

  async load(): Promise<BackgroundTask[]> {
    return [...this.records.values()]
  }

  async put(task: BackgroundTask): Promise<void> {
    if (!task || typeof task.id !== 'string') throw new DoguError('INVALID_OPTIONS', 'put() expects a task record')
    this.records.set(task.id, task)
  }

  async delete(ids: readonly string[]): Promise<void> {
    for (const id of ids) this.records.delete(id)
  }

  async flush(): Promise<void> {}
}
