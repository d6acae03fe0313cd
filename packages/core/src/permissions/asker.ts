import type { RepairRecord } from '../repair/repair-step'
import type { RevisionRefusal } from '../result-params'
import type Schema from 'schemastery'
import type { Session } from '../session'
import type { AnswerVia, Approver, ApproverPolicy, AskScope } from '../types/approver'
import type { Effect, PermissionSpec } from '../types/effect'
import type { ToolPreview } from '../types/tool-preview'
import type { Denial } from '../types/denial'
import type { ResumeFailure } from './resume-failure'
import type { RuleSource } from './permission-rule'
import type { ElicitationJsonSchema } from '../elicitation/elicitation'

// Declared on the floor (types/), where elicitations, the gate and audit records read them too.
export type { AnswerVia, Approver, ApproverPolicy, AskScope } from '../types/approver'

/** An answer to a permission request. */
export interface AskAnswer {
  decision: 'allow' | 'deny'
  /** @default 'once' */
  scope?: AskScope
  /** The answering user: an id, or an id with platform and authority. */
  by: string | Approver
  /** Shown to the model with a denial. */
  reason?: string
  /** How the answer was given, for the audit log: `text`, `button`, `console`, `mcp`, `terminal`, … */
  via?: AnswerVia
  /**
   * The values a person entered, for a request that asks for input (`request.input`): with
   * `allow`, the call's edited arguments. The call runs with them only after they are
   * validated and authorized again; an answer whose value fails either is refused
   * (`respond` says `invalid` or `not-allowed`) and the request keeps waiting.
   */
  value?: unknown
  /**
   * For an elicitation (`kind: 'elicitation'`): the person dismissed the question without
   * answering (MCP `cancel`), as opposed to `deny`, a no (MCP `decline`).
   */
  dismissed?: boolean
}

/**
 * The input part of a question: a schema to fill, a message, and the values to start from.
 * On an approval request it lets an approver edit the call's arguments before approving;
 * askers show it with the console's form (`ToolForm`) or, in chat, as JSON.
 */
export interface InputQuestion {
  /** What to fill: the tool's arguments schema (its JSON, `schema.toJSON()`, is what consoles render). */
  schema: Schema
  /** What the person is asked to enter, in a line. */
  message?: string
  /** The values to start from: the call's arguments, secret fields shown as `••••` (left so, they keep their value). */
  initial?: unknown
  /**
   * Checks a value before it is sent: `undefined` when it would be accepted, else why not
   * (`limit: expected a number`). `respond` checks again; this lets an asker explain.
   */
  check(value: unknown): string | undefined
  /**
   * On an approval request's edit: the call as it would run with `value`, its arguments
   * after the tool's validation (defaults filled in, secret fields `••••`) and what changed,
   * or why it cannot run (`check`'s reason, and its `refusal` for a person's locale:
   * `describeRevision(refusal, locale)`). What an asker shows the person as the edit is
   * accepted, so they see what runs, not only what they typed. On a tool's form (an
   * elicitation): the values as the tool gets them (its defaults filled in, `changes` empty),
   * or why the form refuses them (`check`'s reason, its `refusal` a `validation`).
   */
  resolve?(value: unknown): EditedArguments | { error: string; refusal?: RevisionRefusal }
  /**
   * For an elicitation: the form as MCP's `requestedSchema` (a flat object of primitive
   * fields), what an MCP client is sent. The tool's own JSON when it gave one.
   */
  requestedSchema?: Readonly<ElicitationJsonSchema>
}
/** An approver's edit as the call will run with it (`InputQuestion.resolve`). */
export interface EditedArguments {
  /** The edited call's arguments after validation: defaults filled in, secret fields `••••`. */
  args: unknown
  /** What changed from the call as asked, one line per path (`$.env: "prod" → "staging"`); empty when nothing did. */
  changes: readonly string[]
}

/** What askers are shown. Immutable. */
export interface PermissionRequest {
  /** Random and unguessable; answers are bound to the request by `respond`, not by id. */
  id: string
  /**
   * `elicitation`: not an approval but a running tool's form (`call.elicit`): show
   * `input.message` and the form; `allow` with `value` fills it, `deny` declines, an answer
   * with `dismissed` cancels. Absent for an approval.
   */
  kind?: 'elicitation'
  callId: string
  session: Session
  tool: string
  permission: PermissionSpec
  effect: Effect
  /** A short human summary of the call: `deploy(env=prod)`. Secret fields show as `••••`. */
  summary: string
  /**
   * The call's arguments as the permission service was given them: from the pipeline, with
   * secret fields (`.role('secret')`) replaced by `••••` (see `maskSecrets`). For askers
   * that show more than the summary; never the clear secret. Absent for a call without
   * arguments.
   */
  args?: unknown
  /** Why a person is asked: the rule or default that asked, or the tool's own reason. */
  reason: string
  /**
   * What asked, for askers that word the reason themselves (in the chat's language): the
   * rule, or the effect's default when no rule matched. Absent when the tool asked for
   * itself (`call.ask(reason)`): then `reason` is the tool's own words.
   */
  asked?: Readonly<RuleSource> | Readonly<{ kind: 'default'; effect: Effect }>
  approvers: ApproverPolicy
  /**
   * What the call would do (the tool's `preview`): a diff, the whole command, the URL as
   * fetched. Each field is bounded to 64 KiB; askers show a part and offer the rest.
   */
  preview?: Readonly<ToolPreview>
  /** Set when the model's arguments were malformed and repaired: `args` are the repaired ones (show that they are). */
  repaired?: Readonly<RepairRecord>
  /**
   * Set when an approver may edit the call before approving it: answer `allow` with
   * `value`, the edited arguments. Absent for a tool's own `call.ask` (the call is running).
   */
  input?: Readonly<InputQuestion>
  /** Set when remembered answers do not apply: `session`/`always` answers count as `once`. */
  confirm?: 'always'
  createdAt: number
  expiresAt: number
  /**
   * Set on a question asked again from the pending store (`permissions.durable`): after a
   * restart, or found there by another instance. Its `id` is new (answers to the old one's
   * buttons are refused: they are bound to the request that was live then); `originalId` is
   * the id it was first asked under (`PendingRecord.id`), `instance` the instance that asked
   * and `at` when this engine read it. `createdAt` and `expiresAt` are the first ask's. An
   * answer runs the call once, as a background task of the caller's session: the model's
   * turn that asked is gone. `AskerContext.answer` tells what came of an answer.
   */
  restored?: Readonly<{ at: number; originalId: string; instance: string }>
  /**
   * `false` when the engine keeps requests (`permissions.durable`) but could not write this
   * one to its store: it will not survive a restart, and an asker may say so. Askers that
   * already show it learn it from `AskerContext.kept`. Absent otherwise.
   */
  durable?: false
}

/**
 * What `respond` made of an answer. Only `accepted` ends the request. `refused`: the answer
 * came from someone who may give it, in a valid form, and still cannot count now: a restored
 * request (`request.restored`) whose tool this instance does not define (it stays open for an
 * instance that does), or one the rules deny now (it is closed). `AskerContext.answer` says why.
 */
export type RespondStatus = 'accepted' | 'not-allowed' | 'invalid' | 'closed' | 'refused'

/** What finally came of an answer (`AskerContext.answer`). */
export interface AnswerResult {
  /**
   * `respond`'s status, or what the store said after it: `taken` when another answer, on
   * this instance or another, claimed the request first (`by` says whose); `failed` when a
   * restored request was approved and its call could not be started (`reason`).
   */
  status: RespondStatus | 'taken' | 'failed'
  /**
   * Why, when there is more to say than the status: the refusal (`the tool "deploy" is not
   * defined on this instance`, a rule that denies it now), the edit's problem; for an accepted
   * answer to a restored request, the decision (`approved by mock:alice (once) after a restart`).
   */
  reason?: string
  /** For an edit refused (`invalid`, `not-allowed`): `reason`'s structured form, for a person's locale (`describeRevision`). */
  refusal?: RevisionRefusal
  /**
   * For a restored request the rules deny now (`refused`, closed): `reason`'s structured form,
   * for a person's locale (`describeDenial`): the rule, mode or default that denies the call.
   */
  denial?: Denial
  /** For a restored request that now needs other approvers (`not-allowed`): who may answer it now. */
  approvers?: Readonly<ApproverPolicy>
  /** For `failed`: why the tools host could not start the call, in its own words (`reason` says it whole). */
  error?: string
  /** For `failed`: `error`'s structured form, when the tools host gave one, for a person's locale. */
  failure?: ResumeFailure
  /** For `taken`: who answered first (`mock:alice`), when the store knows. */
  by?: string
  /** For an accepted `allow` of a restored request: the background task the call runs as. */
  taskId?: string
  /** Whether the request still waits for an answer after this one (true for `invalid`, `not-allowed` and a `refused` that keeps it open). */
  open: boolean
}

export interface AskerContext {
  /** Aborts when the request ends for any reason: answered, expired, cancelled, stopped. */
  signal: AbortSignal
  /**
   * Delivers an answer; may be called many times (each reply in a chat). An answer from
   * someone who may not answer is ignored and logged, and the request keeps waiting.
   *
   * With a pending store (`permissions.durable`), an accepted answer may count only once the
   * store says so: always for a restored request (`request.restored`), and for any request
   * when the store is shared by several instances (`PendingStore.shared`), since an answer
   * on another instance may have claimed it first. Then `accepted` means the answer is being
   * carried out, and `answer` tells how it ended.
   */
  respond(answer: AskAnswer): RespondStatus
  /**
   * Delivers an answer as `respond` does, and resolves with what finally came of it: at once
   * for a request of this process on an unshared store; for a restored request once the store
   * claimed it for this instance (or said another answer had: `taken`, with `by`), it was
   * authorized again and its call started (`taskId`). Never rejects. `PermissionEngine`
   * always sets it; optional so that a context made by hand (a test's) need not.
   */
  answer?(answer: AskAnswer): Promise<AnswerResult>
  /**
   * Once `signal` aborted: who ended the request with an answer on another instance (its
   * claim in a shared pending store), and which instance, when the store says. `undefined`
   * while the request is open and when anything else ended it. A host that posted the
   * question closes it with this ("already answered by mock:alice"): a live request's end is
   * also reported as a decision (`DecisionSource` `elsewhere`), a restored one's only here
   * (the instance that answered reports it). `PermissionEngine` always sets it.
   */
  elsewhere?(): { by: string; instance?: string } | undefined
  /**
   * With a pending store (`permissions.durable`) and a request that is kept in it: settles
   * `true` once it is written (it survives a restart), `false` when the store failed (the
   * question should say it will not survive one). Absent when the request is not kept.
   */
  kept?: Promise<boolean>
}

/**
 * Shows a permission request to people (chat, WebUI, terminal) and reports their
 * answers. It may resolve with an answer (same as `respond(answer)`), or resolve with
 * nothing and answer through `respond` later. Rejecting is logged; when every asker
 * rejects, the request is denied at once.
 *
 * An asker that cannot reach anyone for this request (an MCP client that declared no
 * elicitation, a session that is not its own) throws an error with `code: 'CANNOT_ASK'`
 * and a message saying why: that is expected, one info line without a stack, and when no
 * asker could ask, the model reads "nobody could be asked to approve <tool> (<why>)". Any
 * other rejection is a failure, logged as a warning with its error.
 */
export type Asker = (request: PermissionRequest, context: AskerContext) => Promise<AskAnswer | void> | AskAnswer | void
