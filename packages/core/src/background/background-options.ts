import { DoguError } from '../errors'
import type { Logger } from '../logger'
import type { Session } from '../session'
import type { BackgroundTask, TaskStatus } from './background-task'
import { DEFAULT_RETENTION, type RetentionLimits } from './retention'
import type { TaskStore } from './task-store'

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

const LIMITS = ['maxTasks', 'maxAgeMs', 'maxResultLength'] as const

/** The retention limits in force: the defaults, overridden by the limits given (an `undefined` one keeps its default), checked and frozen. */
export function retentionLimits(limits: Partial<RetentionLimits> = {}): Readonly<RetentionLimits> {
  const result: RetentionLimits = { ...DEFAULT_RETENTION }
  for (const key of LIMITS) {
    if (limits[key] !== undefined) result[key] = limits[key]
  }
  for (const key of LIMITS) {
    if (typeof result[key] !== 'number' || !(result[key] >= 1)) {
      throw new DoguError('INVALID_OPTIONS', `retention limit ${key} must be a number, 1 or more (got ${JSON.stringify(result[key])})`)
    }
  }
  return Object.freeze(result)
}

/** `cancelTimeout` in milliseconds, checked: 5 s when not given. */
export function cancelTimeoutOf(cancelTimeout: number | undefined): number {
  const ms = cancelTimeout ?? 5_000
  if (!(ms >= 0) || !Number.isFinite(ms)) {
    throw new DoguError('INVALID_OPTIONS', 'cancelTimeout must be a finite number of milliseconds')
  }
  return ms
}
