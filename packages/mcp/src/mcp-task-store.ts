import type { BackgroundTask, ListTasksOptions, RunningCall, ToolResult, WaitTaskOptions } from '@dogu/core'
import type { TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks'
import { type CallToolResult, ErrorCode, McpError as SdkError, RELATED_TASK_META_KEY, type Result, type Task as McpTask } from '@modelcontextprotocol/sdk/types.js'
import { type McpTaskViewOptions, taskResultOf, toMcpTask } from './task-status'

/**
 * What MCP tasks need of Dogu's background service: `ctx.background` (Cordis) or a
 * `BackgroundEngine`. It must be the service the tool registry hands timed-out calls to
 * (`registry.background`): a call in task mode is handed over by the pipeline itself.
 */
export interface McpBackground {
  adopt(call: RunningCall): BackgroundTask
  get(id: string): BackgroundTask | undefined
  list(options?: ListTasksOptions): BackgroundTask[]
  wait(id: string, options: WaitTaskOptions): Promise<BackgroundTask | undefined>
  cancel(id: string, reason?: string): Promise<BackgroundTask | undefined>
  /** A `BackgroundEngine`'s retention limits: `maxAgeMs` is stated as each task's `ttl`. */
  readonly limits?: { readonly maxAgeMs: number }
}

export interface McpTaskStoreOptions {
  /** The background service now (it may come and go), or `undefined` while none is loaded. */
  background(): McpBackground | undefined
  /** Whether the connection may see (get, list, wait for, cancel) this task. */
  owns(task: BackgroundTask): boolean
  /** A Dogu result as the `CallToolResult` the call would have returned. */
  toResult(result: ToolResult): CallToolResult
  /** Milliseconds between `tasks/get` polls a working task asks for. @default 1000 */
  pollInterval?: number
}

/**
 * Whether a background task belongs to a connection's authorization context: a call made
 * over MCP by the same user (a token's user, stdio's user), from any of their connections,
 * before a restart too. A connection without a token (`anonymous`, loopback only) identifies
 * nobody: it sees only the tasks of its own session.
 */
export function ownsTask(task: BackgroundTask, owner: { user: string; sessionId: string; anonymous: boolean }): boolean {
  if (task.session.platform !== 'mcp' || !task.session.id.startsWith('mcp:')) return false
  if (owner.anonymous) return task.session.id === owner.sessionId
  return task.session.userId === owner.user
}

/** `tasks/list` pages: tasks per page. */
const PAGE_SIZE = 50
/** How long one wait of `tasks/result` lasts before the task is looked up again. */
const RESULT_WAIT_SLICE = 30_000

/**
 * One MCP connection's view of Dogu's background tasks, as the SDK's `TaskStore`: the SDK's
 * `tasks/get`, `tasks/list` and `tasks/cancel` handlers read it, and `tasks/result` is
 * `result()`. A task the connection does not own is unknown to it (not found), whoever asks.
 * Tasks are never created here: a tool call in task mode is handed to the background by the
 * pipeline, and the task is the one it made.
 */
export class McpTaskStore implements TaskStore {
  private readonly pollInterval: number

  constructor(private options: McpTaskStoreOptions) {
    this.pollInterval = options.pollInterval ?? 1000
  }

  /** The task as MCP reads it, or `undefined` when it is unknown, evicted or not this connection's. */
  view(id: string): McpTask | undefined {
    const task = this.lookup(id)
    return task && this.present(task)
  }

  /** A task as MCP reads it, with this store's poll interval and ttl. */
  present(task: BackgroundTask): McpTask {
    return toMcpTask(task, this.viewOptions())
  }

  async createTask(): Promise<McpTask> {
    throw new Error('Dogu makes a task from a tool call in task mode, never through the task store')
  }

  async getTask(taskId: string): Promise<McpTask | null> {
    return this.view(taskId) ?? null
  }

  async storeTaskResult(): Promise<void> {
    throw new Error('a Dogu task settles with its call; its result cannot be stored from outside')
  }

  async getTaskResult(taskId: string): Promise<Result> {
    const task = this.found(taskId)
    if (task.status === 'running') throw new SdkError(ErrorCode.InvalidParams, `Task ${taskId} is still working`)
    return taskResultOf(task, this.options.toResult)
  }

  /** Only cancelling is asked of a Dogu task from outside (`tasks/cancel`): its call's signal aborts. */
  async updateTaskStatus(taskId: string, status: McpTask['status']): Promise<void> {
    this.found(taskId)
    if (status !== 'cancelled') throw new SdkError(ErrorCode.InvalidParams, `a Dogu task's status follows its call; it cannot be set to ${status}`)
    await this.service().cancel(taskId, 'the MCP client cancelled the task')
  }

  async listTasks(cursor?: string): Promise<{ tasks: McpTask[]; nextCursor?: string }> {
    const background = this.options.background()
    if (!background) return { tasks: [] }
    const owned = background.list().filter((task) => this.options.owns(task))
    let start = 0
    if (cursor !== undefined) {
      const index = owned.findIndex((task) => task.id === cursor)
      if (index < 0) throw new Error(`unknown cursor ${JSON.stringify(cursor)} (its task may have been evicted)`)
      start = index + 1
    }
    const page = owned.slice(start, start + PAGE_SIZE)
    const view = this.viewOptions()
    const tasks = page.map((task) => toMcpTask(task, view))
    return start + PAGE_SIZE < owned.length ? { tasks, nextCursor: page[page.length - 1].id } : { tasks }
  }

  /**
   * `tasks/result`: blocks until the task settles (each wait bounded, then the task looked up
   * again), then returns what the call would have returned, tagged with its task. Aborting
   * `signal` (the request cancelled, the connection closed) ends the wait.
   */
  async result(taskId: string, signal: AbortSignal): Promise<CallToolResult> {
    for (;;) {
      const task = this.found(taskId)
      if (task.status !== 'running') {
        const result = taskResultOf(task, this.options.toResult)
        return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } }
      }
      if (signal.aborted) throw new SdkError(ErrorCode.InvalidRequest, 'Request cancelled')
      await this.service().wait(taskId, { timeout: RESULT_WAIT_SLICE, signal }).catch(() => {
        throw new SdkError(ErrorCode.InvalidRequest, 'Request cancelled')
      })
    }
  }

  private viewOptions(): McpTaskViewOptions {
    const ttl = this.options.background()?.limits?.maxAgeMs
    return { pollInterval: this.pollInterval, ...(Number.isFinite(ttl) ? { ttl } : {}) }
  }

  private lookup(id: string): BackgroundTask | undefined {
    if (typeof id !== 'string') return
    const task = this.options.background()?.get(id)
    return task && this.options.owns(task) ? task : undefined
  }

  private found(id: string): BackgroundTask {
    const task = this.lookup(id)
    if (!task) throw new SdkError(ErrorCode.InvalidParams, `Task not found: ${id}`)
    return task
  }

  private service(): McpBackground {
    const background = this.options.background()
    if (!background) throw new SdkError(ErrorCode.InternalError, 'the background service is not loaded')
    return background
  }
}
