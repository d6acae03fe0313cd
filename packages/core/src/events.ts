import type { ApproverPolicy } from './permissions/asker'
import type { RepairRecord } from './repair/repair-step'
import type { Session } from './session'
import type { LogLevel } from './elicitation/elicitation'
import type { ToolResult } from './tool-result'
import type { AnswerVia, Approver, AskScope } from './types/approver'

/**
 * @internal The pipeline's own identity of a call: a number unique among the calls in
 * flight, on the call (its `CallInfo`) and on every request the pipeline makes for it. The
 * audit log matches a call's decisions to its end by it, since the model may give two calls
 * of one batch the same id. A symbol: no JSON, log or console shows it.
 */
export const CALL_SERIAL: unique symbol = Symbol('dogu.call-serial')

/** What hosts, logs and the WebUI see of a call as it starts. */
export interface CallInfo {
  id: string
  name: string
  session: Session
  /** The arguments, with secret fields (`.role('secret')`) shown as `••••`: what a log may print. */
  args: unknown
  startedAt: number
  /** Set when the model's arguments were malformed and repaired (`args` are the repaired ones). */
  repaired?: RepairRecord
  /**
   * Set on a call run for an answer given after a restart (`permissions.durable`): the ask it
   * answers. Its `id` is the asking call's with `/resumed` added; it runs as a background task.
   */
  resumes?: ResumedFrom
}

/** The ask a call run after a restart answers, and who approved it then (`CallInfo.resumes`). */
export interface ResumedFrom {
  /** The model's call id that asked, before the restart (`PendingRecord.callId`). */
  callId: string
  /** The id the request was first asked under (`PendingRecord.id`). */
  requestId: string
  /** When it was first asked (epoch ms). */
  askedAt: number
  /** Who approved it after the restart. */
  by: Approver
  scope: AskScope
  via?: AnswerVia
  /** The grant the answer made (`scope` `session` or `always`): its `Grant.id`. */
  grantId?: string
  /** The approver edited the arguments first (validated and authorized again). */
  edited?: true
  /** Who could answer: the request's approver policy. */
  approvers?: Readonly<ApproverPolicy>
}

/** Events the runtime emits; `@dogu/cordis` forwards them as `ctx.emit('tools/…')`. */
export interface ToolEvents {
  'tools/call-start'(info: CallInfo): void
  'tools/call-progress'(info: CallInfo, message: string): void
  /** A tool's `call.log(level, data)`; `data` is redacted like the call's text. */
  'tools/call-log'(info: CallInfo, level: LogLevel, data: unknown): void
  'tools/call-end'(info: CallInfo, result: ToolResult): void
  /** The registry changed: a tool was defined, replaced or removed. */
  'tools/changed'(): void
}

/** Where the runtime sends its events; a host forwards them (`ctx.emit`). */
export type EmitFunction = (name: keyof ToolEvents, ...args: any[]) => void
