import type { AuthorizeRequest } from '../permission-gate'
import type { AnswerVia, Approver, AskScope } from '../types/approver'
import type { Decision } from '../types/decision'
import type { Denial } from '../types/denial'
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
  /**
   * The engine stopped while the request waited. `kept`: its record stays in the pending
   * store (`permissions.durable`), and it is asked again after a restart. For a restored
   * request closed at load (a `call.ask` from inside a run, secret arguments) it is unset.
   */
  | { kind: 'stopped'; kept?: true }
  /**
   * Another instance on the shared pending store claimed the request (an answer given there):
   * the call runs there, and this instance's wait ends. `by`: who answered, when the store says.
   */
  | { kind: 'elsewhere'; instance?: string; by?: string }

/** The payload of `permissions/decision`. */
export interface DecisionEvent {
  /** `authorize`: a rule, grant, mode or default decided; `approve`: an ask ended; `middleware`: a middleware blocked the call; `quota`: a quota refused it. */
  phase: 'authorize' | 'approve' | 'middleware' | 'quota'
  decision: Decision
  reason?: string
  /** For a deny that ended an ask (`approve`): `reason`'s structured form, for a person's locale (`describeDenial`). */
  denial?: Denial
  source: DecisionSource
  request: Readonly<AuthorizeRequest & { callId?: string; reason?: string }>
  /** The permission request's id, for `approve` decisions that reached the askers. */
  requestId?: string
  /** Who could answer (the request's approver policy), for `approve` decisions that reached the askers. */
  approvers?: Readonly<ApproverPolicy>
  /**
   * Set for the decision on a request read from the pending store (`permissions.durable`):
   * answered, expired or closed after a restart, or on another instance than the one that
   * asked. `requestId` is then the id it was first asked under (`PendingRecord.id`), the one
   * the asking instance's records carry. No call of this process waited for it.
   */
  restored?: true
  /** With `restored`: when the request was first asked (`PendingRecord.createdAt`, ms since the epoch). */
  askedAt?: number
  at: number
}
