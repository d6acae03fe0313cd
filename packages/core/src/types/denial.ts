import type { ApproverPolicy } from './approver'
import type { Decision } from './decision'
import type { Effect, PermissionSpec } from './effect'

/**
 * Why a rule, a mode or the effect default decided as it did: the structured form of an
 * `AuthorizeResult.reason`, so the same decision can be told in a person's locale.
 * - `rule`: a permission rule from `origin` (`koishi.yml`, `addRule()`): its `name` when it has
 *   one, else what it matches (`permission`, `target` or `command`, `sandboxed`).
 * - `mode`: the session's permission mode for this effect.
 * - `default`: no rule matched; the effect's default.
 * - `grant`: a remembered approval (allow only).
 * - `malformed`: the call named no valid permission (deny only).
 */
export type RuleCause =
  | { kind: 'rule'; decision: Decision; name?: string; permission: string; target?: string; command?: string; sandboxed?: boolean; origin: string }
  | { kind: 'mode'; decision: Decision; mode: string; effect: Effect }
  | { kind: 'default'; decision: Decision; effect: Effect }
  | { kind: 'grant'; scope: string; by: string; id: string }
  | { kind: 'malformed' }

/**
 * Why a call was denied: the parameters of a `permission_denied` result (`ToolResult.params`)
 * and the structured form next to a deny's `reason` (`AuthorizeResult.cause`,
 * `ApprovalOutcome.cause`). Keyed by `cause`, so a renderer's switch is exhaustive; its
 * English rendering is the `reason` the model reads.
 * - `rule`: a deny rule or mode, or a malformed permission (`decided`; absent when the gate said no more than that a rule denies it).
 * - `declined`: a person said no (`by`, the approver's label, `mock:alice`; their `reason` if they gave one).
 * - `expired`: nobody answered within `timeoutMs`.
 * - `cancelled`: the call was cancelled while it waited (`when: 'waiting'`) or before anyone was asked (`'before_ask'`).
 * - `no_asker`: approval is needed (`asked`: why), but no asker is registered to ask anyone;
 *   the message says how to add one (`ctx.permissions.asker(...)`).
 * - `unreachable`: every asker said it cannot reach anyone for this request (`why`, their reasons; `elicitation` for a tool's form).
 * - `askers_failed`: every asker threw (`error`, the last one's message).
 * - `askers_unloaded`: every asker showing the request was removed before anyone answered.
 * - `stopped`: the permissions service stopped while the request waited (`when: 'waiting'`;
 *   `kept`: the request is kept and asked again after a restart), or was stopped before (`'before_ask'`).
 * - `elsewhere`: another instance answered (`by`) or closed (`closed`) the request.
 * - `edit_denied`: an approver (`by`) edited the arguments, and the edited call is denied (`denial`).
 * - `rewrite_denied`: a middleware (`middleware`, its name; `plugin`, its plugin's) rewrote the call, and the rewritten call is denied (`denial`).
 * - `no_service`: no permission service is loaded, so only read-only tools may run (a rewrite's
 *   `effect`), or none is loaded to approve a tool's own `call.ask` (`asked`).
 * - `check_failed`: the permission check threw (`error`, its message).
 * - `no_decision`: the permission check returned no valid decision (`got`, as JSON).
 * - `unvalidated_edit`: the gate approved arguments the pipeline did not validate.
 * - `not_approved`: an approval ended with no reason.
 * - `approval_changed`: approved after a restart for `approved`, but the call now needs `needs`.
 * - `tool`, `middleware`, `gate`: a reason in the words of a tool (`call.deny`), a middleware
 *   (`by`, its name) or a permission gate: told as written, not translated.
 */
export type Denial =
  | { cause: 'rule'; decided?: RuleCause }
  | { cause: 'declined'; by: string; reason?: string }
  | { cause: 'expired'; timeoutMs: number }
  | { cause: 'cancelled'; when: 'waiting' | 'before_ask' }
  | { cause: 'no_asker'; asked: AskedFor }
  | { cause: 'unreachable'; tool: string; elicitation?: true; why: string[] }
  | { cause: 'askers_failed'; error: string }
  | { cause: 'askers_unloaded' }
  /** The answer the caller's framework gave with the call (`ExecuteOptions.answers`) was not one this request takes: `by` may not answer it, or it was malformed. */
  | { cause: 'answer_refused'; by: string; approvers?: ApproverPolicy }
  | { cause: 'stopped'; when: 'waiting' | 'before_ask'; kept?: true }
  | { cause: 'elsewhere'; instance?: string; by?: string; closed?: string }
  | { cause: 'edit_denied'; by: string; denial: Denial }
  | { cause: 'rewrite_denied'; middleware: string; plugin?: string; denial: Denial }
  | { cause: 'no_service'; effect: Effect } | { cause: 'no_service'; asked: string }
  | { cause: 'check_failed'; error: string }
  | { cause: 'no_decision'; got: string }
  | { cause: 'unvalidated_edit' }
  | { cause: 'not_approved' }
  | { cause: 'approval_changed'; approved: Pick<PermissionSpec, 'name' | 'target'>; needs: Pick<PermissionSpec, 'name' | 'target'> }
  | { cause: 'tool'; reason: string }
  | { cause: 'middleware'; by: string; reason: string }
  | { cause: 'gate'; reason: string }

/** Why a person's approval was needed: a rule or the effect default (`RuleCause`), or a tool's own `call.ask(reason)`. */
export type AskedFor = RuleCause | { kind: 'tool'; reason: string }

/** Every `Denial` cause. */
export type DenialCause = Denial['cause']
