import type { Session } from '../session'
import { TOOL_STATUSES, type ToolResult, type ToolStatus } from '../tool-result'

/** Where a background task stands. Every status but `running` is final. */
export type TaskStatus = 'running' | 'succeeded' | 'failed' | 'cancelled' | 'interrupted'

/**
 * A call that outlived its timeout and continues in the background. Records are frozen:
 * every change replaces the record, so one handed out never changes under its reader.
 */
export interface BackgroundTask {
  readonly id: string
  /** The tool's name. */
  readonly tool: string
  /** The id of the model's call that became this task. */
  readonly callId: string
  readonly session: Session
  readonly status: TaskStatus
  /** Epoch milliseconds the call started (not when it was adopted). */
  readonly startedAt: number
  /** Epoch milliseconds the task reached its final status. */
  readonly settledAt?: number
  /**
   * The result the call would have returned, when it ended on its own or by cancel.
   * Absent while running and for `interrupted` tasks, whose result was lost.
   */
  readonly result?: ToolResult
}

/** How a call's result status maps to its task's status. */
export const TASK_STATUS_OF: Readonly<Record<ToolStatus, TaskStatus>> = Object.freeze({
  ok: 'succeeded',
  error: 'failed',
  denied: 'failed',
  timed_out: 'failed',
  cancelled: 'cancelled',
  // A result never settles as `background`; if one did, it did not succeed.
  background: 'failed',
  // Refused before it ran, so never adopted; if one were, it did not run.
  rate_limited: 'failed',
})

export const TASK_STATUSES: ReadonlySet<TaskStatus> = new Set<TaskStatus>(['running', 'succeeded', 'failed', 'cancelled', 'interrupted'])

const RESULT_STATUSES: ReadonlySet<string> = new Set(TOOL_STATUSES)

/**
 * True when `value` has the shape of a task record. Stores read records from disk or a
 * database, which may hold anything; the engine trusts only what passes this check.
 */
export function isBackgroundTask(value: unknown): value is BackgroundTask {
  if (!isObject(value)) return false
  const task = value as Record<string, unknown>
  if (typeof task.id !== 'string' || !task.id) return false
  if (typeof task.tool !== 'string' || typeof task.callId !== 'string') return false
  if (!isObject(task.session) || typeof (task.session as Session).id !== 'string') return false
  if (!TASK_STATUSES.has(task.status as TaskStatus)) return false
  if (!Number.isFinite(task.startedAt)) return false
  if (task.settledAt !== undefined && !Number.isFinite(task.settledAt)) return false
  if (task.result !== undefined) {
    if (!isObject(task.result)) return false
    const result = task.result as Record<string, unknown>
    if (typeof result.content !== 'string' || !RESULT_STATUSES.has(result.status as string)) return false
  }
  return true
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
