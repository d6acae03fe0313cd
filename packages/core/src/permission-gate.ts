import type { AskAnswer } from './permissions/asker'
import type { RepairRecord } from './repair/repair-step'
import type { ValidationResult } from '@dogu/schema'
import type Schema from 'schemastery'
import type { PermissionMode } from './permissions/permission-modes'
import type { Session } from './session'
import type { Approver } from './types/approver'
import type { Decision } from './types/decision'
import type { RevisionRefusal } from './result-params'
import type { Denial, RuleCause } from './types/denial'
import type { Effect, PermissionSpec } from './types/effect'
import type { ToolPreview } from './types/tool-preview'
import type { ElicitationJsonSchema } from './elicitation/elicitation'

// Declared on the floor (types/), where modes and rules read it too.
export type { Decision } from './types/decision'

/** What the pipeline asks the permission service about one call. */
export interface AuthorizeRequest {
  session: Session
  permission: PermissionSpec
  effect: Effect
  tool: string
  args: unknown
  /** `always` when the tool demands a fresh answer every time. */
  confirm?: 'always'
  /**
   * Set when the caller only asks what would be decided (`Toolset.decide`: a framework's
   * `needsApproval`): no call is made, so the decision is not reported or audited.
   */
  probe?: true
}

export interface AuthorizeResult {
  decision: Decision
  reason?: string
  /**
   * The structured form of `reason`, so a host can tell it in a person's locale: the rule,
   * mode, default or grant that decided. A gate that sets only `reason` is told as written.
   */
  cause?: RuleCause
  /** What decided: a rule, a grant, a mode or the effect default. For audit logs. */
  rule?: unknown
}

/** A request for a person's approval, made by the pipeline (`ask`) or by `call.ask(reason)`. */
export interface ApprovalRequest extends AuthorizeRequest {
  callId: string
  reason?: string
  /** What the call would do (`defineTool({ preview })`), already bounded. */
  preview?: Readonly<ToolPreview>
  /** Set by the pipeline for its own asks: lets an approver edit the arguments before approving. */
  edit?: ArgumentEditor
  /** Set when the model's arguments were malformed and repaired: the person sees the repaired ones, marked so. */
  repaired?: RepairRecord
  /** Set for a tool's `call.elicit`: not an approval but a form to fill; never remembered, never audited as a decision. */
  elicit?: ElicitQuestion
  /**
   * Set for a tool's own `call.ask(reason)` from inside its `run`: the run it would continue
   * cannot outlive the process, so a pending store keeps it marked (`PendingRecord.inRun`)
   * and it is closed after a restart. A gate that is not told reads a `reason` other than the
   * permission's own as such an ask.
   */
  inRun?: true
  /**
   * An answer the caller already has (`ExecuteOptions.answers`: a framework asked its own
   * user). When the call would be asked about, the engine takes this as the answer to the
   * question instead of asking its askers, checked like any answer (who may give it, its
   * scope, remembered and audited as such). A call the rules allow or deny ignores it.
   */
  answer?: Readonly<AskAnswer>
}

/** What `call.elicit` asks: the form, validated on answer, and the message shown with it. */
export interface ElicitQuestion {
  schema: Schema
  message: string
  /** The form as MCP's `requestedSchema`: the tool's own JSON, or made from `schema`. */
  requestedSchema: ElicitationJsonSchema
  /** Milliseconds to wait; the engine's ask timeout when unset. */
  timeout?: number
  /** Checks an answer against `schema`, applying its defaults (an empty answer is the defaults). */
  validate(value: unknown): ValidationResult
}

/** How an approver's edit of a call's arguments is checked; the pipeline supplies it. */
export interface ArgumentEditor {
  /** The tool's arguments schema: what the edit form shows. */
  schema: Schema
  /**
   * Validates edited arguments as the model's would be (secret fields left as `••••` keep
   * their value) and returns the edited call, or why it cannot run.
   */
  revise(args: unknown): RevisedCall | { error: string; refusal?: RevisionRefusal }
}

/** An approver's edit, validated: what the call becomes if the edit is approved. */
export interface RevisedCall {
  /** The validated edited arguments, as the tool's `run` will receive them (secrets in clear). */
  input: unknown
  /** What the approver changed, one line per path (`$.limit: 5 → 2`); empty when nothing did. */
  changes: readonly string[]
  /** The edited call as a new request from the same caller: its own permission, target and (masked) arguments. */
  request: AuthorizeRequest & { callId: string }
}

export interface ApprovalOutcome {
  decision: 'allow' | 'deny'
  reason?: string
  /** For a deny, the structured form of `reason` (`Denial`): who declined, the timeout, that nobody could be asked. */
  denial?: Denial
  /** Set when an approver edited the arguments: the call runs with these instead (`RevisedCall.input`). */
  edited?: RevisedCall
  /** What ended the ask (an answer, a timeout, a grant), as `AuthorizeResult.rule`. For telemetry and audit logs. */
  rule?: unknown
  /** For an elicitation accepted: the values, validated with the form's defaults. */
  value?: unknown
  /** For an elicitation not answered (dismissed, expired, cancelled, nobody to ask): it ends as `cancel`. */
  dismissed?: boolean
  /** Who answered, when a person did. */
  by?: Approver
}

/** A decision made on the pipeline, outside the gate: a middleware that blocked a call, a quota used up. */
export interface PipelineDecision {
  request: AuthorizeRequest & { callId: string }
  decision: Decision
  reason?: string
  source: { kind: 'middleware'; name: string } | { kind: 'quota'; name: string }
}

/**
 * The seam between the pipeline and a permission service. The core never decides `ask`
 * itself: it asks the gate, and without a gate it fails closed (read runs, the rest is
 * denied).
 */
export interface PermissionGate {
  authorize(request: AuthorizeRequest): AuthorizeResult | Promise<AuthorizeResult>
  /** Resolves when a person answers, the request expires (deny) or `signal` aborts (deny). */
  approve(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalOutcome>
  /**
   * The session's permission mode, which the pipeline reads once as a call starts and
   * hands the tool as `call.mode`. Synchronous and cheap: it runs for every call. Without
   * it, calls see `'default'`.
   */
  modeOf?(sessionId: string): PermissionMode
  /** Reports a decision the pipeline made (a middleware's denial) like the gate's own: the decision event, the audit log. */
  reportDecision?(decision: PipelineDecision): void
}
