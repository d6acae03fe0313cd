import type { RepairStep } from '../repair/repair-step'
import type { TaskStatus } from '../background/background-task'
import type { Decision } from '../permission-gate'
import type { AnswerVia, Approver, ApproverPolicy, AskScope } from '../permissions/asker'
import type { PermissionMode } from '../permissions/permission-modes'
import type { Effect } from '../tool'
import type { ToolResultCode, ToolStatus } from '../tool-result'

/** Who called and where: the call's session, as the host filled it. */
export interface AuditCaller {
  sessionId: string
  platform?: string
  userId?: string
  channelId?: string
  guildId?: string
  authority?: number
}

/** What decided the call, from the decision event's source. */
export type AuditDecider =
  | { kind: 'rule'; id: string; origin: string; decision: Decision; permission: string; name?: string }
  | { kind: 'grant'; id: string; scope: 'session' | 'always'; by: string }
  | { kind: 'mode'; mode: PermissionMode }
  | { kind: 'default'; effect: Effect }
  /** A middleware (`ctx.tools.use`) blocked the call after the permission check let it through. */
  | { kind: 'middleware'; name: string }
  /** A quota (`quotas`) was used up: the call ended `rate_limited` without running. */
  | { kind: 'quota'; name: string }

/** How an ask ended: answered, or why nobody answered. */
export type AuditAskEnd = 'answer' | 'timeout' | 'cancelled' | 'no-asker' | 'askers-failed' | 'stopped'
  /** Another instance on a shared pending store claimed the request (an answer given there): the call runs there. */
  | 'elsewhere'

/** A person was asked about the call (the pipeline's ask, or the tool's own `call.ask`). */
export interface AuditAsk {
  /** The permission request's id. */
  requestId?: string
  /** Who could answer: the request's approver policy. */
  approvers?: Readonly<ApproverPolicy>
  /** How the ask ended. */
  ended: AuditAskEnd
  decision: 'allow' | 'deny'
  /** Who answered (only when `ended` is `answer`). */
  by?: Approver
  /** How they answered, when their asker said: `text`, `button`, `console`, `mcp`, `terminal`, … */
  via?: AnswerVia
  scope?: AskScope
  /** The grant the answer created (`session` or `always`). */
  grantId?: string
  /** The arguments were edited by the approver before approval (validated and authorized again). */
  edited?: boolean
  /**
   * With `ended: 'elsewhere'`: where the answer was given, as the shared pending store says
   * (`DecisionSource` `elsewhere`): the instance that claimed the request and runs the call,
   * and who answered there (`mock:alice`). That instance's record of the call has the answer
   * in full, with `resumes` naming this ask.
   */
  elsewhere?: { instance?: string; by?: string }
}

/**
 * One audited call: who called what, what decided it, who was asked and answered, and how
 * it ended. Plain JSON: one line of `audit.jsonl`, one row of `dogu_audit`.
 */
export interface AuditRecord {
  /** `aud_<uuid>`. */
  id: string
  /** When the call started (ms since the epoch); a decision without a call: when it was made. */
  at: number
  /**
   * The call ended before its authorization (an unknown tool, arguments that did not parse or
   * validate, a `permission()` that threw, a cancellation first): nobody authorized or was
   * asked about it. Such records are coalesced (`count`) and are the first to go when the
   * store is full: they never push out the record of a call that was authorized or asked.
   */
  early?: true
  /**
   * How many calls this `early` record stands for: refusals of one session with the same
   * code (and, but for unknown tools, the same tool) ended within one write of the log. The
   * other fields are the first call's; `endedAt` is the last one's end. Absent for one call.
   */
  count?: number
  /** When the call ended. */
  endedAt: number
  tool: string
  /** The model's call id (two calls of a batch may share it: each has its record); empty for a decision no call carried. */
  callId: string
  /** The validated arguments, unless hashed (`argsHash`). */
  args?: unknown
  /** `sha256:<hex>` of the arguments' canonical JSON, where `hashArguments` says so (or they are too long). */
  argsHash?: string
  caller: AuditCaller
  /** The rule, grant, mode or default that decided; absent when no permission check ran (unknown tool, bad arguments, no gate). */
  decided?: AuditDecider
  /** Set when a person was asked. */
  ask?: AuditAsk
  /** The call's `ToolResult.status`. */
  outcome: ToolStatus
  code?: ToolResultCode
  /** The denial's reason, for `denied` calls. */
  reason?: string
  /** The background task the call continues as (`outcome: 'background'`), or whose end this records. */
  taskId?: string
  /**
   * Set on the record of a background task's end (a second record for the call): the task's
   * final status. Its `outcome` is the result's status (`error` for an `interrupted` task).
   */
  taskStatus?: Exclude<TaskStatus, 'running'>
  /** The tool's own run time (`ToolResult.durationMs`). */
  durationMs: number
  /** Milliseconds spent waiting for a person (`ToolResult.waitMs`). */
  waitMs?: number
  /** The model's arguments were malformed and repaired before the call (`ToolResult.repaired`); `args` are the repaired ones. */
  repaired?: { steps: RepairStep[] }
  /**
   * Set on the record of a question answered after a restart (`permissions.durable`), or on
   * another instance than the one that asked: the ask it answers. The asking call has a
   * record of its own, with the same `callId` here and `ask.requestId`: denied, `ask.ended`
   * `stopped`, when the process stopped while it waited. Approved, the call ran as a
   * background task (`outcome: 'background'`; its `callId` is the asking one's with
   * `/resumed` added); declined, expired or denied by a rule meanwhile, the record is `denied`.
   */
  resumes?: AuditResumes
}

/** The ask a record of an answer after a restart answers (`AuditRecord.resumes`). */
export interface AuditResumes {
  /** The model's call that asked, before the restart. */
  callId: string
  /** The permission request's id when it was first asked. */
  requestId: string
  /** When it was first asked (ms since the epoch); absent when the decision did not say. */
  askedAt?: number
}

/** What `query` selects; every field narrows. */
export interface AuditFilter {
  /** A user id, or `platform:id`. */
  user?: string
  tool?: string
  outcome?: ToolStatus | readonly ToolStatus[]
  sessionId?: string
  /** Records at or after this time (ms since the epoch). */
  since?: number
  /** Records before this time. */
  until?: number
  /** At most this many, newest first. */
  limit?: number
}

/** How much the store keeps. */
export interface AuditRetention {
  /** Most records kept: the oldest `early` records go first, then the oldest of the others. */
  maxRecords: number
  /** Records older than this (by `at`) are removed. */
  maxAgeMs: number
}

export const DEFAULT_AUDIT_RETENTION: Readonly<AuditRetention> = Object.freeze({ maxRecords: 10_000, maxAgeMs: 30 * 24 * 60 * 60 * 1000 })
