import type { AuthorizeRequest } from '../permission-gate'
import type { AnswerVia, Approver, AskScope } from '../types/approver'
import type { Decision } from '../types/decision'
import type { Effect } from '../types/effect'
import type { ApproverPolicy } from './asker'
import type { Grant } from './grant'
import type { PermissionMode } from './permission-modes'
import type { RuleSource } from './permission-rule'

/**
 * What decided a call — the `rule` of an `AuthorizeResult` and of every
 * `permissions/decision` event, so an audit log can answer "why did this run?".
 */
export type DecisionSource =
  | RuleSource
  | { kind: 'grant'; grant: Readonly<Grant> }
  | { kind: 'mode'; mode: PermissionMode }
  | { kind: 'default'; effect: Effect }
  | {
    kind: 'answer'
    by: Approver
    scope: AskScope
    grant?: Readonly<Grant>
    via?: AnswerVia
    /** The approver edited the arguments; the edited call was validated and authorized again. */
    edited?: true
  }
  | { kind: 'timeout'; timeout: number }
  /** A middleware (`ctx.tools.use`) blocked the call after the gate allowed it. */
  | { kind: 'middleware'; name: string }
  /** A quota (`quotas`) was used up: the call ended `rate_limited`. */
  | { kind: 'quota'; name: string }
  | { kind: 'cancelled' }
  | { kind: 'no-asker' }
  | { kind: 'askers-failed' }
  | { kind: 'stopped' }

/** The payload of `permissions/decision`. */
export interface DecisionEvent {
  /** `authorize`: a rule, grant, mode or default decided; `approve`: an ask ended; `middleware`: a middleware blocked the call; `quota`: a quota refused it. */
  phase: 'authorize' | 'approve' | 'middleware' | 'quota'
  decision: Decision
  reason?: string
  source: DecisionSource
  request: Readonly<AuthorizeRequest & { callId?: string; reason?: string }>
  /** The permission request's id, for `approve` decisions that reached the askers. */
  requestId?: string
  /** Who could answer (the request's approver policy), for `approve` decisions that reached the askers. */
  approvers?: Readonly<ApproverPolicy>
  at: number
}
