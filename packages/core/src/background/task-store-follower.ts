import type { RunningCall } from '../background-port'
import { DoguError } from '../errors'
import type { Logger } from '../logger'
import { type BackgroundTask, isBackgroundTask } from './background-task'
import type { RetentionLimits } from './retention'
import { TaskBook } from './task-book'
import type { TaskStore } from './task-store'
import { TaskWriter } from './task-writer'
import { settledWithin } from '../settled-within'

/** A call the engine adopted, while it runs. */
export interface Running {
  call: RunningCall
  /** Called once when the task settles or the engine stops. */
  waiters: Set<() => void>
}

export type EngineState = 'new' | 'loading' | 'active' | 'disposed'

/**
 * The store-following half of `BackgroundEngine`: the lifecycle from `load()`, the records
 * in memory and in the store, store switches under the living engine, what other instances
 * wrote to a shared store, and retention. `BackgroundEngine` adds adopting, waiting,
 * cancelling and stopping.
 */
export abstract class TaskStoreFollower {
  protected readonly book: TaskBook
  protected readonly running = new Map<string, Running>()
  protected readonly writer: TaskWriter
  protected state: EngineState = 'new'
  private loading: Promise<void> | undefined
  /** The last store switch; the next one, and `dispose`, wait for it. */
  protected switching: Promise<void> = Promise.resolve()
  private readonly runningHere = (id: string) => this.running.has(id)

  constructor(
    readonly limits: Readonly<RetentionLimits>,
    store: TaskStore,
    protected readonly logger: Logger,
    /** How long `cancel` waits for the call to settle, and a switch for the old store's writes. */
    protected readonly cancelTimeout: number,
  ) {
    this.book = new TaskBook(limits)
    this.writer = new TaskWriter(store, logger, (id) => this.book.get(id))
  }

  /** Where records go now. */
  protected get store(): TaskStore {
    return this.writer.store
  }

  /** True between a finished `load()` and `dispose()`. */
  get active(): boolean {
    return this.state === 'active'
  }

  /**
   * Reads the store. Tasks stored as `running` were cut off by a restart: they come back
   * as `interrupted`, settled now, and are written back so.
   */
  load(): Promise<void> {
    if (this.state !== 'new') return Promise.reject(new DoguError('INACTIVE', `load() was called on a background engine that is ${this.state}`))
    this.state = 'loading'
    return this.loading = this.loadStore()
  }

  /**
   * Switches where records persist, under the living engine: running calls go on, and
   * waits, tasks and their ids stay. The old store's writes are flushed (waiting at most
   * `cancelTimeout`); the new store is read and merged as a restart would read it (a task
   * it holds as `running` that does not run here was cut off: `interrupted`), except that
   * the tasks running here are written to it as running. Changes made while it is read are
   * written once it is, and so is a record whose write to the old store failed. Hosts call
   * this when a database appears or goes; resolves once the switch is done. After
   * `dispose()` it does nothing.
   */
  useStore(store: TaskStore): Promise<void> {
    if (!store || typeof store.load !== 'function' || typeof store.put !== 'function' || typeof store.delete !== 'function' || typeof store.flush !== 'function') {
      throw new DoguError('INVALID_OPTIONS', 'useStore() expects a task store { load, put, delete, flush, sync? }')
    }
    const previous = this.switching
    return this.switching = previous.then(() => this.switchTo(store))
  }

  private async switchTo(store: TaskStore): Promise<void> {
    if (this.state === 'loading') await this.loading?.catch(() => {})
    // Not loaded (or its load failed): the next load() reads the new store.
    if (this.state === 'new') {
      this.writer.store = store
      return
    }
    if (this.state !== 'active') return
    const old = this.store
    const dirty = this.writer.hold(this.running.keys())
    this.writer.store = store
    if (!await settledWithin(old.flush(), this.cancelTimeout)) {
      this.logger.warn('switching the background task store: the old store had not flushed after %d ms; reading the new one anyway', this.cancelTimeout)
    }
    let records: BackgroundTask[] = []
    try {
      records = await store.load()
    } catch (error) {
      this.logger.warn('reading the new background task store failed; tasks known here stay, and their changes are written to it from now on: %s', error)
    }
    const cutOff = this.book.merge(records, this.runningHere, dirty, Date.now())
    this.writer.release()
    for (const id of dirty) {
      const task = this.book.get(id)
      if (task) this.writer.put(task)
      else this.writer.delete([id])
    }
    if (this.state !== 'active') return
    this.prune()
    this.cutOff(cutOff)
    if (this.store.sync) await this.syncShared()
  }

  private async loadStore(): Promise<void> {
    let records: BackgroundTask[]
    try {
      records = await this.store.load()
    } catch (error) {
      if (this.state === 'loading') this.state = 'new'
      throw error
    }
    if (this.state !== 'loading') return
    const valid = records.filter(isBackgroundTask)
    if (valid.length < records.length) this.logger.warn('the background task store returned %d invalid record(s); they were ignored', records.length - valid.length)
    const cutOff = this.book.load(valid, Date.now())
    for (const task of cutOff) this.writer.put(task)
    this.state = 'active'
    this.prune()
    this.cutOff(cutOff)
    // A shared store: tasks other instances run are known from the start.
    if (this.store.sync) await this.syncShared()
  }

  /**
   * With a store several instances share (one with `sync`), takes in the records other
   * instances wrote: their new tasks, their settled ones, and tasks whose instance stopped
   * renewing its lease, now `interrupted`. Tasks running here are never touched. Does
   * nothing with a store of one process's own. A failed read is reported and changes nothing.
   */
  async refresh(): Promise<void> {
    // Not while a switch reads its new store: the records it has yet to write would look cut off.
    await this.switching
    await this.syncShared()
  }

  protected async syncShared(): Promise<void> {
    const { store } = this
    if (this.state !== 'active' || !store.sync) return
    let records: BackgroundTask[]
    try {
      records = await store.sync()
    } catch (error) {
      // A read cut off by the app stopping (the engine, or the database under the store) is expected.
      if (this.state !== 'active' || this.store.gone !== undefined) this.logger.debug('reading the shared background task store failed as it stopped: %s', error)
      else this.logger.warn('reading the shared background task store failed: %s', error)
      return
    }
    if (this.state !== 'active') return
    this.book.follow(records, this.runningHere)
    this.prune()
  }

  /**
   * Tasks a store held as `running` that do not run here, now `interrupted`: a restart cut
   * them off. `BackgroundEngine` announces them as it announces a task that settles.
   */
  protected abstract cutOff(tasks: readonly BackgroundTask[]): void

  /** Evicts what the retention limits no longer allow, from memory and the store. */
  protected prune() {
    const evicted = this.book.evict()
    if (evicted.length) this.writer.delete(evicted)
  }
}
