import type Schema from 'schemastery'
import type { RepairRecord } from '../repair/repair-step'
import type { RevisionRefusal } from '../result-params'
import type { Effect, PermissionSpec } from '../types/effect'
import type { ToolPreview } from '../types/tool-preview'
import type { Approver, ApproverPolicy, AnswerVia, AskScope, PermissionRequest } from './asker'
import type { Grant } from './grant'

export type { ResumeFailure } from './resume-failure'

/**
 * The session a request was asked in, as a store keeps it: what a host needs to post the
 * question again and to deliver the result to the same place after a restart. Hosts may add
 * their own fields under `host` (Koishi: the bot's `selfId`); they are kept as given.
 */
export interface StoredSession {
  id: string
  userId?: string
  channelId?: string
  guildId?: string
  platform?: string
  authority?: number
  cwd?: string
  host?: Readonly<Record<string, string | number | boolean>>
}

/**
 * A permission request as a `PendingStore` keeps it (`permissions.durable`), so that it
 * outlives the process that asked: after a restart it is asked again, and an answer then
 * runs the call once. Written when the pipeline asks; removed by an answer, an expiry or a
 * cancellation. Stopping the process leaves it.
 */
export interface PendingRecord {
  /** The request's id when it was first asked. A question asked again after a restart gets a new `PermissionRequest.id`; this one stays. */
  id: string
  callId: string
  tool: string
  /**
   * The call's arguments as the tool would receive them (after validation and repair), with
   * secret fields (`.role('secret')`) as `••••`: no built-in store keeps secrets, so they are
   * never written. Absent for a call without arguments.
   */
  args?: unknown
  /**
   * Set when `args` had secret fields: the call cannot run again from the record (its
   * secrets were never stored). After a restart such a request is closed with a reason.
   */
  masked?: true
  permission: PermissionSpec
  effect: Effect
  summary: string
  /** Why a person is asked (`PermissionRequest.reason`). */
  reason: string
  asked?: PermissionRequest['asked']
  session: StoredSession
  approvers: ApproverPolicy
  preview?: ToolPreview
  repaired?: RepairRecord
  confirm?: 'always'
  /**
   * A tool's own `call.ask(reason)` from inside its run: the run it would continue is gone
   * after a restart, so such a request is closed then, with a line that says why.
   */
  inRun?: true
  createdAt: number
  expiresAt: number
  /** The instance that asked (`PermissionEngine.instanceId`). */
  instance: string
  /** Set once an answer claimed it (`PendingStore.claim`): the instance that runs it. */
  claimedBy?: string
  /** Who claimed it, for the answerer who came second (`mock:alice`). */
  claimedFor?: string
}

/** What a store found when it loaded. */
export interface PendingStoreLoad {
  /** The open requests (not claimed), oldest first. */
  records: PendingRecord[]
  /**
   * Rows or entries that do not read as a request (corrupt, or missing fields): the engine
   * reports each and removes it, and a host closes its question with `why`.
   */
  bad: { id?: string; why: string; session?: StoredSession }[]
}

/**
 * Where pending requests live across restarts (`permissions.durable`). A file beside the
 * grants for one instance; the minato table `dogu_pending` for several on one database.
 */
export interface PendingStore {
  load(): Promise<PendingStoreLoad>
  /** Writes a new request (or replaces one of the same id). */
  put(record: PendingRecord): Promise<void>
  /** Removes a request, claimed or not; removing one that is gone is not an error. */
  remove(id: string): Promise<void>
  /**
   * Claims an open request for `instance` with one conditional write (it succeeds only
   * while `claimedBy` is unset): true for exactly one of any number of racing claimants.
   * Resolves `false` when another claimed it first or it is gone.
   */
  claim(id: string, instance: string, by: string): Promise<boolean>
  /** The request as stored now (claimed or not), or `undefined` when it is gone. */
  get(id: string): Promise<PendingRecord | undefined>
  /** Optional: why the store can no longer be used (its database stopped). */
  readonly gone?: string
  /**
   * Optional: other instances read and answer this store's requests (a database). The engine
   * then claims a request before an answer given here counts, even one it asked itself, and
   * reads the store on `refreshPending` to see what other instances asked and claimed.
   */
  readonly shared?: boolean
}

/**
 * A request kept from before that is closed unanswered (`PermissionEngineOptions.onClosed`):
 * found in the store at load or refresh and not asked again, evicted, or asked again but
 * never runnable here (`undefined-tool`). A host tells the record's channel, with `reason`.
 * - `expired`: its expiry passed while the process was down (or, evicted, past `maxPending`);
 * - `in-run`: a tool's own `call.ask` from inside a run, which a restart ended;
 * - `masked`: its arguments had secret fields, which were never stored;
 * - `undefined-tool`: restored from a store no other instance shares, its tool was still not
 *   defined here a minute after the restart (`TOOL_GRACE_MS`), so no one could run it;
 * - `corrupt`: a record that did not read as one (`record` is absent; `id` and `session` when
 *   the store could tell them).
 */
export interface ClosedRequest {
  cause: 'expired' | 'evicted' | 'in-run' | 'masked' | 'undefined-tool' | 'corrupt'
  /** One line saying why, for the channel. */
  reason: string
  /**
   * For `corrupt`: what the store said of the entry it could not read, in its own words
   * (English, naming the file or row), for a host that frames it in a person's locale.
   */
  detail?: string
  record?: Readonly<PendingRecord>
  id?: string
  session?: Readonly<StoredSession>
}

/**
 * An answer given after a restart, handed to the tools host (`PermissionEngine.onResume`):
 * the engine has checked the answerer, claimed the request for this instance and decided the
 * call again at this moment; the host runs it once, as a background task of `record.session`.
 */
export interface ResumedCall {
  record: Readonly<PendingRecord>
  /** The arguments to run with: the record's, or the approver's edit after it was validated and authorized. */
  args: unknown
  /** Set when the approver edited the arguments: what changed, one line per path. */
  changes?: readonly string[]
  by: Readonly<Approver>
  scope: AskScope
  /** The grant the answer made (`scope` `session` or `always`), as a live answer's decision carries it. */
  grant?: Readonly<Grant>
  via?: AnswerVia
  /** The decision's reason, as the audit log records it (`approved by mock:alice (once) after a restart`). */
  reason: string
}

/** The tools host's side of resuming (a `ToolRegistry` registers one on its engine). */
export interface ResumeHandler {
  /** Whether this instance defines the tool: an answer that reaches an instance that does not is refused, and the request stays open. */
  defines(tool: string): boolean
  /**
   * Validates `args` against the tool's schema (for an edit), as `InputQuestion.resolve`
   * does: the arguments as the tool would run with them, or why not. `permission`: the
   * edited call's own permission (`tool.permission(args)`), which the engine authorizes;
   * without it the record's permission is used, target and all. `record` (optional): the
   * request the edit is for; its session and arguments are what the edit's permission is
   * worked out for and its changes counted from (a `ToolRegistry`'s handler gives no
   * permission without it, and the call is then held to the record's).
   */
  check?(tool: string, args: unknown, record?: Readonly<PendingRecord>): { args: unknown; changes: readonly string[]; permission?: PermissionSpec } | { error: string; refusal?: RevisionRefusal }
  /**
   * Optional: the tool's arguments schema, for the edit form of a restored question
   * (`PermissionRequest.input`, with `check`). Without it a restored question shows no form;
   * an edit sent anyway still goes through `check`.
   */
  schema?(tool: string): Schema | undefined
  /** Runs the call once as a background task of the record's session; resolves with the task's id, or throws why it could not start. */
  resume(call: ResumedCall): Promise<{ taskId: string }>
}
