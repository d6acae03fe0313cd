import type { BackgroundTask, TaskStatus, ToolResult } from '@dogu/core'
import type { CallToolResult, Task as McpTask } from '@modelcontextprotocol/sdk/types.js'

/**
 * How a Dogu background task's status reads as an MCP task status. MCP has no `interrupted`:
 * such a task did not complete and never will, so it is `failed`, and its status message
 * says it was cut off (`INTERRUPTED_MESSAGE`).
 */
export const MCP_TASK_STATUS: Readonly<Record<TaskStatus, McpTask['status']>> = Object.freeze({
  running: 'working',
  succeeded: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
  interrupted: 'failed',
})

/** The status message of an `interrupted` task, and the text of its result. */
export const INTERRUPTED_MESSAGE = 'Interrupted: the server stopped or restarted while the task was running; its result was lost.'

/** Longest status message taken from a result's text: a status line, not the whole result. */
const MAX_STATUS_MESSAGE = 500

export interface McpTaskViewOptions {
  /** Milliseconds a requestor should wait between `tasks/get` polls of a working task. */
  pollInterval: number
  /**
   * How long a settled task is kept (the background service's `maxAgeMs`), stated as the
   * task's `ttl`. Dogu counts it from when the task settled, and may evict a task earlier
   * when it holds more than `maxTasks`. Unset: `null` (no stated limit).
   */
  ttl?: number
}

/** A Dogu background task as an MCP `Task` (`tasks/get`, `tasks/list`, `CreateTaskResult`). */
export function toMcpTask(task: BackgroundTask, options: McpTaskViewOptions): McpTask {
  const status = MCP_TASK_STATUS[task.status] ?? 'failed'
  const mcp: McpTask = {
    taskId: task.id,
    status,
    ttl: options.ttl ?? null,
    createdAt: new Date(task.startedAt).toISOString(),
    lastUpdatedAt: new Date(task.settledAt ?? task.startedAt).toISOString(),
  }
  if (status === 'working') mcp.pollInterval = options.pollInterval
  const message = statusMessageOf(task)
  if (message) mcp.statusMessage = message
  return mcp
}

/**
 * What `tasks/result` returns for a settled task: exactly what the call would have returned
 * (`toResult` of its Dogu result); an `interrupted` task, whose result was lost, reads as an
 * error result saying so.
 */
export function taskResultOf(task: BackgroundTask, toResult: (result: ToolResult) => CallToolResult): CallToolResult {
  if (task.result) return toResult(task.result)
  return { content: [{ type: 'text', text: task.status === 'interrupted' ? INTERRUPTED_MESSAGE : `The task ended ${task.status} without a result.` }], isError: true }
}

function statusMessageOf(task: BackgroundTask): string | undefined {
  if (task.status === 'interrupted') return INTERRUPTED_MESSAGE
  // Why a task failed or was cancelled is the start of its result's text (`Error: …`, `Cancelled: …`).
  if ((task.status === 'failed' || task.status === 'cancelled') && task.result) {
    const text = task.result.content
    return text.length > MAX_STATUS_MESSAGE ? `${text.slice(0, MAX_STATUS_MESSAGE - 1)}…` : text
  }
  return undefined
}
