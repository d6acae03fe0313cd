import type { BackgroundPort, RunningCall } from '../background-port'
import { DoguError } from '../errors'
import { type Logger, silentLogger } from '../logger'
import type { Session } from '../session'
import type { ToolResult } from '../tool-result'
import { type BackgroundTask, isBackgroundTask, TASK_STATUS_OF, TASK_STATUSES, type TaskStatus } from './background-task'
import { capResult, DEFAULT_RETENTION, type RetentionLimits, selectEvictions } from './retention'
import { MemoryTaskStore, type TaskStore } from './task-store'
import { messageOf } from '../error-message'
import { settledWithin } from '../settled-within'

export interface BackgroundEngineOptions {
  /** Where records persist. @default a `MemoryTaskStore` */
  store?: TaskStore
  /** @default DEFAULT_RETENTION */
  limits?: Partial<RetentionLimits>
  /** Called with the final record when a task settles (`background/settled`). */
  onSettled?: (task: BackgroundTask) => void
  /** Store failures and late results are reported here. */
  logger?: Logger
  /** How long `cancel` waits for the call to settle, in milliseconds. @default 5_000 */
  cancelTimeout?: number
}

export interface ListTasksOptions {
  /** Only this session's tasks: a session or its id. */
  session?: Session | string
  /** Only tasks in this status (or these statuses). */
  status?: TaskStatus | readonly TaskStatus[]
}

export interface WaitTaskOptions {
  /** Milliseconds to wait at most; then the task is returned as it is (maybe `running`). */
  timeout: number
  /** Aborting rejects the wait with the signal's reason. */
  signal?: AbortSignal
}

interface Running {
  call: RunningCall
  /** Called once when the task settles or the engine stops. */
  waiters: Set<() => void>
}

type State = 'new' | 'loading' | 'active' | 'disposed'

/**
 * The host-free background service: it adopts calls that outlived their timeout, keeps
 * their records, and lets hosts and the model follow them.
 *
 * Lifecycle: `await load()` first (a task the store holds as `running` was cut off by a
 * restart and becomes `interrupted`); `dispose()` aborts every running call's signal and
 * records its task as `interrupted`, ends every wait, and flushes the store.
 *
 * Retention is applied on every change and lookup, so no timer runs: the oldest settled
 * tasks are evicted explicitly (from memory and the store), running ones never.
 *
 * @example
 * const engine = new BackgroundEngine({ store: new JsonFileTaskStore('data/tasks.json') })
 * await engine.load()
 * registry.background = engine
 */
export class BackgroundEngine implements BackgroundPort {
  readonly limits: Readonly<RetentionLimits>
  private tasks = new Map<string, BackgroundTask>()
  private running = new Map<string, Running>()
  /** Settled tasks, oldest-settled first: eviction order. Settled records never change. */
  private settled = new Map<string, BackgroundTask>()
  private store: TaskStore
  private logger: Logger
  private onSettled?: (task: BackgroundTask) => void
  private cancelTimeout: number
  private state: State = 'new'
  private disposing: Promise<void> | undefined
  private loading: Promise<void> | undefined
  /** The last store switch; the next one, and `dispose`, wait for it. */
  private switching: Promise<void> = Promise.resolve()
  /** While a switch reads the new store: ids whose records changed, written once it is read. */
  private dirty: Set<string> | undefined

  constructor(options: BackgroundEngineOptions = {}) {
    this.limits = Object.freeze(checkLimits({ ...DEFAULT_RETENTION, ...definedOnly(options.limits) }))
    this.store = options.store ?? new MemoryTaskStore()
    this.logger = options.logger ?? silentLogger
    this.onSettled = options.onSettled
    this.cancelTimeout = options.cancelTimeout ?? 5_000
    if (!(this.cancelTimeout >= 0) || !Number.isFinite(this.cancelTimeout)) {
      throw new DoguError('INVALID_OPTIONS', 'cancelTimeout must be a finite number of milliseconds')
    }
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
      this.store = store
      return
    }
    if (this.state !== 'active') return
    const old = this.store
    const dirty = this.dirty = new Set(this.running.keys())
    this.store = store
    if (!await settledWithin(old.flush(), this.cancelTimeout)) {
      this.logger.warn('switching the background task store: the old store had not flushed after %d ms; reading the new one anyway', this.cancelTimeout)
    }
    let records: BackgroundTask[] = []
    try {
      records = await store.load()
    } catch (error) {
      this.logger.warn('reading the new background task store failed; tasks known here stay, and their changes are written to it from now on: %s', error)
    }
    this.merge(records, dirty)
    this.dirty = undefined
    for (const id of dirty) {
      const task = this.tasks.get(id)
      if (task) this.persist(task)
      else this.guard(() => this.store.delete([id]), 'evicting from')
    }
    if (this.state !== 'active') return
    this.prune()
    if (this.store.sync) await this.syncShared()
  }

  /** Takes in a new store's records: what it holds that is not known here, running ones as cut off. */
  private merge(records: readonly BackgroundTask[], dirty: Set<string>) {
    const now = Date.now()
    let changed = false
    let added = false
    for (const record of records) {
      if (!isBackgroundTask(record) || this.running.has(record.id)) continue
      const current = this.tasks.get(record.id)
      // A settled record here is final; the store gets it back.
      if (current && current.status !== 'running') {
        if (record.status !== current.status || record.settledAt !== current.settledAt) dirty.add(record.id)
        continue
      }
      const task = record.status === 'running'
        ? Object.freeze({ ...record, status: 'interrupted' as const, settledAt: now })
        : Object.freeze({ ...record })
      if (record.status === 'running') dirty.add(task.id)
      if (!current) added = true
      this.tasks.set(task.id, task)
      this.settled.delete(task.id)
      this.settled.set(task.id, task)
      changed = true
    }
    if (changed) this.sortSettled()
    if (added) this.sortTasks()
  }

  /** `list()` gives tasks in the order they started; records taken from a store arrive in its order. */
  private sortTasks() {
    this.tasks = new Map([...this.tasks].sort(([, a], [, b]) => a.startedAt - b.startedAt))
  }

  private sortSettled() {
    const sorted = [...this.settled.values()].sort((a, b) => (a.settledAt ?? a.startedAt) - (b.settledAt ?? b.startedAt))
    this.settled = new Map(sorted.map((task) => [task.id, task]))
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
    const now = Date.now()
    const sorted = valid.sort((a, b) => a.startedAt - b.startedAt)
    const settled: BackgroundTask[] = []
    for (let task of sorted) {
      if (task.status === 'running') {
        task = Object.freeze({ ...task, status: 'interrupted', settledAt: now })
        this.persist(task)
      } else {
        task = Object.freeze({ ...task })
      }
      this.tasks.set(task.id, task)
      settled.push(task)
    }
    settled.sort((a, b) => (a.settledAt ?? a.startedAt) - (b.settledAt ?? b.startedAt))
    for (const task of settled) this.settled.set(task.id, task)
    this.state = 'active'
    this.prune()
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

  private async syncShared(): Promise<void> {
    if (this.state !== 'active' || !this.store.sync) return
    let records: BackgroundTask[]
    try {
      records = await this.store.sync()
    } catch (error) {
      // A read cut off by the app stopping (the engine, or the database under the store) is expected.
      if (this.state !== 'active' || this.store.gone !== undefined) this.logger.debug('reading the shared background task store failed as it stopped: %s', error)
      else this.logger.warn('reading the shared background task store failed: %s', error)
      return
    }
    if (this.state !== 'active') return
    let changed = false
    let added = false
    for (const record of records) {
      if (!isBackgroundTask(record) || this.running.has(record.id)) continue
      const current = this.tasks.get(record.id)
      if (current && current.status === record.status && current.settledAt === record.settledAt) continue
      // A settled record is final: an older view of it (`running`) never replaces it.
      if (current && current.status !== 'running' && record.status === 'running') continue
      const task = Object.freeze({ ...record })
      if (!current) added = true
      this.tasks.set(task.id, task)
      if (task.status !== 'running') {
        this.settled.delete(task.id)
        this.settled.set(task.id, task)
        changed = true
      }
    }
    // Eviction reads `settled` oldest-settled first; others' records arrive in any order.
    if (changed) this.sortSettled()
    if (added) this.sortTasks()
    this.prune()
  }

  /**
   * Takes over a running call (the pipeline calls this when a call's timeout fires) and
   * returns its new task, `running`. Throws `INACTIVE` before `load()` or after `dispose()`,
   * and the pipeline then times the call out as it would without a background service.
   */
  adopt(call: RunningCall): BackgroundTask {
    if (this.state !== 'active') throw new DoguError('INACTIVE', `the background engine is ${this.state === 'disposed' ? 'disposed' : 'not loaded yet'}`)
    if (!call || typeof call.result?.then !== 'function' || typeof call.cancel !== 'function' || typeof call.session?.id !== 'string') {
      throw new DoguError('INVALID_OPTIONS', 'adopt() expects a running call { callId, tool, session, args, startedAt, result, cancel }')
    }
    const id = this.newId()
    const task: BackgroundTask = Object.freeze({
      id,
      tool: String(call.tool),
      callId: String(call.callId),
      session: call.session,
      status: 'running',
      startedAt: Number.isFinite(call.startedAt) ? call.startedAt : Date.now(),
    })
    this.tasks.set(id, task)
    this.running.set(id, { call, waiters: new Set() })
    call.result.then(
      (result) => this.settle(id, result),
      // The port promises a result that never rejects; should one reject, the task failed.
      (error) => this.settle(id, failure(task, error)),
    )
    this.persist(task)
    this.prune()
    return task
  }

  /** A task by id, or `undefined` when unknown or evicted. */
  get(id: string): BackgroundTask | undefined {
    if (typeof id !== 'string') return
    this.prune()
    return this.tasks.get(id)
  }

  /** Tasks in the order they started, filtered by session and status. */
  list(options: ListTasksOptions = {}): BackgroundTask[] {
    const sessionId = typeof options.session === 'string' ? options.session : options.session?.id
    const statuses = options.status === undefined ? undefined : new Set(typeof options.status === 'string' ? [options.status] : options.status)
    if (statuses) {
      for (const status of statuses) {
        if (!TASK_STATUSES.has(status)) throw new DoguError('INVALID_OPTIONS', `unknown task status ${JSON.stringify(status)}`)
      }
    }
    this.prune()
    const tasks: BackgroundTask[] = []
    for (const task of this.tasks.values()) {
      if (sessionId !== undefined && task.session.id !== sessionId) continue
      if (statuses && !statuses.has(task.status)) continue
      tasks.push(task)
    }
    return tasks
  }

  /**
   * Resolves with the task once it settles, or as it is when `timeout` passes or the
   * engine stops first; `undefined` for an unknown id. Aborting `signal` rejects.
   */
  wait(id: string, options: WaitTaskOptions): Promise<BackgroundTask | undefined> {
    const timeout = options?.timeout
    if (typeof timeout !== 'number' || !(timeout >= 0) || !Number.isFinite(timeout)) {
      throw new DoguError('INVALID_OPTIONS', 'wait() needs { timeout } in milliseconds: a finite number, 0 or more')
    }
    const { signal } = options
    if (signal?.aborted) return Promise.reject(signal.reason)
    const running = typeof id === 'string' ? this.running.get(id) : undefined
    if (!running || timeout === 0) return Promise.resolve(this.get(id))
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer)
        running.waiters.delete(done)
        signal?.removeEventListener('abort', onAbort)
      }
      const finish = () => {
        done()
        resolve(this.tasks.get(id))
      }
      const onAbort = () => {
        done()
        reject(signal!.reason)
      }
      const timer = setTimeout(finish, timeout)
      running.waiters.add(finish)
      signal?.addEventListener('abort', onAbort, { once: true })
    })
  }

  /**
   * Aborts a running task's call signal and resolves with the task once the call has
   * settled (normally `cancelled`; at most `cancelTimeout` later, as it is then).
   * A settled task is returned unchanged; an unknown id gives `undefined`.
   */
  async cancel(id: string, reason?: string): Promise<BackgroundTask | undefined> {
    const running = typeof id === 'string' ? this.running.get(id) : undefined
    if (!running) return this.get(id)
    try {
      running.call.cancel(reason ?? 'the background task was cancelled')
    } catch (error) {
      this.logger.warn('cancelling background task %s failed: %s', id, error)
    }
    return this.wait(id, { timeout: this.cancelTimeout })
  }

  /**
   * Stops the engine: running calls are aborted and their tasks recorded as `interrupted`
   * (their late results are dropped), waits end, the store is flushed. Later calls to
   * `adopt` throw `INACTIVE`. A second call returns the first one's promise.
   */
  dispose(): Promise<void> {
    if (this.disposing) return this.disposing
    this.state = 'disposed'
    const now = Date.now()
    const stopped = [...this.running]
    this.running.clear()
    for (const [id, { call, waiters }] of stopped) {
      const task = Object.freeze({ ...this.tasks.get(id)!, status: 'interrupted' as const, settledAt: now })
      this.tasks.set(id, task)
      this.settled.set(id, task)
      this.persist(task)
      try {
        call.cancel('the background service stopped')
      } catch (error) {
        this.logger.warn('cancelling background task %s failed: %s', id, error)
      }
      for (const waiter of waiters) waiter()
    }
    // A switch in progress writes what changed meanwhile to its new store first.
    return this.disposing = this.switching.then(() => this.store.flush()).catch((error) => {
      this.logger.warn('flushing the background task store failed: %s', error)
    })
  }

  private settle(id: string, result: ToolResult) {
    const running = this.running.get(id)
    if (!running) {
      this.logger.debug('dropped the late result of background task %s (%s)', id, result?.status)
      return
    }
    this.running.delete(id)
    const previous = this.tasks.get(id)!
    // Whoever called adopt() promised a ToolResult; a malformed one is a failure, not a crash.
    if (typeof result?.content !== 'string') result = failure(previous, new Error('the call settled without a valid result'))
    const task: BackgroundTask = Object.freeze({
      ...previous,
      status: TASK_STATUS_OF[result.status] ?? 'failed',
      settledAt: Date.now(),
      result: capResult(result, this.limits.maxResultLength),
    })
    this.tasks.set(id, task)
    this.settled.set(id, task)
    this.persist(task)
    for (const waiter of running.waiters) waiter()
    try {
      this.onSettled?.(task)
    } catch (error) {
      this.logger.warn('a background/settled listener threw: %s', error)
    }
    this.prune()
  }

  /** Evicts what the retention limits no longer allow. */
  private prune() {
    const oldest = this.settled.values().next().value
    if (!oldest) return
    const now = Date.now()
    // The common case, checked without building anything: nothing to evict.
    if (this.tasks.size <= this.limits.maxTasks && now - (oldest.settledAt ?? oldest.startedAt) <= this.limits.maxAgeMs) return
    const evicted = selectEvictions(this.settled.values(), this.tasks.size, this.limits, now)
    if (!evicted.length) return
    for (const id of evicted) {
      this.tasks.delete(id)
      this.settled.delete(id)
      this.dirty?.add(id)
    }
    if (!this.dirty) this.guard(() => this.store.delete(evicted), 'evicting from')
  }

  private persist(task: BackgroundTask) {
    if (this.dirty) return void this.dirty.add(task.id)
    const { store } = this
    this.guard(() => store.put(task), 'writing to', () => {
      // A write the old store lost as it went (a database stopping): the record goes to the current one.
      if (store === this.store) return false
      const current = this.tasks.get(task.id)
      this.logger.debug('writing task %s to the previous store failed as it went; writing it to the current one', task.id)
      if (current) this.persist(current)
      return true
    })
  }

  // A store failure must not break a call: it is reported, and memory stays authoritative.
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

  private newId(): string {
    let id: string
    // The last group of a v4 UUID: 12 random hex digits.
    do id = `task_${globalThis.crypto.randomUUID().slice(24)}`
    while (this.tasks.has(id))
    return id
  }
}

function failure(task: BackgroundTask, error: unknown): ToolResult {
  const message = messageOf(error)
  return {
    id: task.callId,
    name: task.tool,
    status: 'error',
    content: `Error: ${message}`,
    code: 'tool_error',
    durationMs: Date.now() - task.startedAt,
  }
}

function definedOnly(limits: Partial<RetentionLimits> = {}): Partial<RetentionLimits> {
  const result: Partial<RetentionLimits> = {}
  for (const key of ['maxTasks', 'maxAgeMs', 'maxResultLength'] as const) {
    if (limits[key] !== undefined) result[key] = limits[key]
  }
  return result
}

function checkLimits(limits: RetentionLimits): RetentionLimits {
  for (const key of ['maxTasks', 'maxAgeMs', 'maxResultLength'] as const) {
    if (typeof limits[key] !== 'number' || !(limits[key] >= 1)) {
      throw new DoguError('INVALID_OPTIONS', `retention limit ${key} must be a number, 1 or more (got ${JSON.stringify(limits[key])})`)
    }
  }
  return limits
}
