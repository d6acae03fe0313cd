import type { ActiveCall } from '../active-call'
import type { BackgroundPort } from '../background-port'
import type { EmitFunction } from '../events'
import type { Logger } from '../logger'
import type { MiddlewareStack } from '../middleware/middleware-stack'
import type { PermissionGate } from '../permission-gate'
import type { QuotaBook } from '../quotas/quota-book'
import type { RunningCaps } from '../quotas/running-caps'
import type { Redactor } from '../redaction/redactor'
import type { RunningCalls } from '../running-calls'
import type { Session } from '../session'
import type { ToolEntry } from '../tool-entry'

/** What a pipeline reads from its registry at call time: services may come and go. */
export interface PipelineHost {
  readonly permissions: PermissionGate | undefined
  readonly background: BackgroundPort | undefined
  readonly emit: EmitFunction | undefined
  readonly logger: Logger
  readonly running: RunningCalls<ActiveCall>
  /** `use()`'s middlewares, around every call they match. */
  readonly middleware: MiddlewareStack
  /** Secrets replaced in every result and progress line (`redact`). */
  readonly redactor: Redactor
  /** `quotas`: units a call takes as it passes authorization. */
  readonly quotas: QuotaBook
  /** `maxRunning`: places a call takes as its handler starts. */
  readonly caps: RunningCaps
  /** Repair malformed JSON arguments (`repair`), rather than refuse them. */
  readonly repair: boolean
}

export interface PipelineLimits {
  /** Longest content a result may carry before it is cut. */
  maxContentLength: number
  /** Longest JSON arguments string accepted. */
  maxArgumentsLength: number
  /** An upper bound on every tool's timeout, set by the host. */
  timeout: number
  /** Hand a call of a tool with `background` to the background service as its handler starts. */
  backgroundAtStart?: boolean
}

/** What every stage of one toolset's pipeline shares: its host, limits, session and tools. */
export interface PipelineShared {
  readonly host: PipelineHost
  readonly limits: PipelineLimits
  readonly session: Session
  readonly entries: ReadonlyMap<string, ToolEntry>
  /** The argument paths the model sends JSON-encoded for a tool, in the dialect it was shown. */
  readonly encodedPaths: (entry: ToolEntry) => readonly string[]
}
