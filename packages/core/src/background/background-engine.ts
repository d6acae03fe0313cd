import type { BackgroundPort, RunningCall } from '../background-port'
import { DoguError } from '../errors'
import { silentLogger } from '../logger'
import type { ToolResult } from '../tool-result'
import { type BackgroundEngineOptions, cancelTimeoutOf, type ListTasksOptions, retentionLimits, type WaitTaskOptions } from './background-options'
import { type BackgroundTask, TASK_STATUS_OF, TASK_STATUSES } from './background-task'
import { capResult } from './retention'
import { MemoryTaskStore } from './task-store'
import { TaskStoreFollower } from './task-store-follower'
import { messageOf } from '../error-message'
import { enUS } from '../messages/en-us'

export type { BackgroundEngineOptions, ListTasksOptions, WaitTaskOptions } from './background-options'

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
export class BackgroundEngine extends TaskStoreFollower implements BackgroundPort {
  private onSettled?: (task: BackgroundTask) => void
  private disposing: Promise<void> | undefined

  constructor(options: BackgroundEngineOptions = {}) {
    super(retentionLimits(options.limits), options.store ?? new MemoryTaskStore(), options.logger ?? silentLogger, cancelTimeoutOf(options.cancelTimeout))
    this.onSettled = options.onSettled
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
    this.book.start(task)
    this.running.set(id, { call, waiters: new Set() })
    call.result.then(
      (result) => this.settle(id, result),
      // The port promises a result that never rejects; should one reject, the task failed.
      (error) => this.settle(id, failure(task, error)),
    )
    this.writer.put(task)
    this.prune()
    return task
  }

  /** A task by id, or `undefined` when unknown or evicted. */
  get(id: string): BackgroundTask | undefined {
    if (typeof id !== 'string') return
    this.prune()
    return this.book.get(id)
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
    for (const task of this.book.values()) {
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
        resolve(this.book.get(id))
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
      const task = Object.freeze({ ...this.book.get(id)!, status: 'interrupted' as const, settledAt: now })
      this.book.settle(task)
      this.writer.put(task)
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

  /**
   * Tasks a restart cut off (`load`, or a new store's records on `useStore`): each is
   * announced (`onSettled`) as `interrupted`, so its channel is told and the audit log gets
   * the second record of its call. A task that `dispose` stops is recorded `interrupted` but
   * not announced: the app is stopping, and a later start reads it as it was left.
   */
  protected cutOff(tasks: readonly BackgroundTask[]): void {
    for (const task of tasks) this.announce(task)
  }

  private announce(task: BackgroundTask) {
    try {
      this.onSettled?.(task)
    } catch (error) {
      this.logger.warn('a background/settled listener threw: %s', error)
    }
  }

  private settle(id: string, result: ToolResult) {
    const running = this.running.get(id)
    if (!running) {
      this.logger.debug('dropped the late result of background task %s (%s)', id, result?.status)
      return
    }
    this.running.delete(id)
    const previous = this.book.get(id)!
    // Whoever called adopt() promised a ToolResult; a malformed one is a failure, not a crash.
    if (typeof result?.content !== 'string') result = failure(previous, new Error('the call settled without a valid result'))
    const task: BackgroundTask = Object.freeze({
      ...previous,
      status: TASK_STATUS_OF[result.status] ?? 'failed',
      settledAt: Date.now(),
      result: capResult(result, this.limits.maxResultLength),
    })
    this.book.settle(task)
    this.writer.put(task)
    for (const waiter of running.waiters) waiter()
    this.announce(task)
    this.prune()
  }

  private newId(): string {
    let id: string
    // The last group of a v4 UUID: 12 random hex digits.
    do id = `task_${globalThis.crypto.randomUUID().slice(24)}`
    while (this.book.has(id))
    return id
  }
}

function failure(task: BackgroundTask, error: unknown): ToolResult {
  const message = messageOf(error)
  return {
    id: task.callId,
    name: task.tool,
    status: 'error',
    content: enUS.results.tool_error({ message }),
    code: 'tool_error',
    params: { message },
    durationMs: Date.now() - task.startedAt,
  }
}


