import type { IssueDetail } from '@dogu/schema'
import type { Denial } from './types/denial'
import type { Effect } from './types/effect'

/**
 * One problem with a call's arguments, at `path` (from the root `$`), keyed by `kind` with
 * its parameters: a validation issue without its English `message` (`describeProblem`
 * renders it in a locale; its en-US rendering is that message).
 */
export type ArgumentProblem = IssueDetail & { path: string }

/**
 * Why a call's arguments were refused (`invalid_arguments`), keyed by `kind`:
 * - `validation`: the tool's schema refused them, one problem per path.
 * - `invalid_json`: the text did not parse. `detail` is the parser's own message (English,
 *   what the model reads); `position` (0-based), `line` and `column` (1-based) say where when
 *   the parser did, and `excerpt` the text around it (absent for a tool with secret fields).
 *   `unrepairable` is why `repairArguments` could not fix it, when repair was tried.
 * - `not_object`: the arguments parsed, but not into an object (`got`; `unrepairable` as above
 *   for a string, which may be JSON encoded twice).
 * - `too_large`: the text is `length` characters, over `max`.
 * - `duplicate_key`: a key written twice in one object (`key`, shown as JSON when not a plain word).
 * - `forbidden_key`: a prototype-polluting key (`__proto__`, `constructor`, `prototype`) at `path` (`deep`: nesting too deep to look).
 * - `invalid_encoding`: the field at `path`, which the provider's dialect sends JSON-encoded, did not decode (`detail`, English).
 */
export type ArgumentsRefusal =
  | { kind: 'validation'; problems: ArgumentProblem[] }
  | { kind: 'invalid_json'; detail: string; position?: number; line?: number; column?: number; excerpt?: string; unrepairable?: string }
  | { kind: 'not_object'; got: 'null' | 'array' | 'string' | 'number' | 'boolean' | 'bigint' | 'function' | 'symbol'; unrepairable?: string }
  | { kind: 'too_large'; length: number; max: number }
  | { kind: 'duplicate_key'; key: string; path: string }
  | { kind: 'forbidden_key'; path: string; deep?: true }
  | { kind: 'invalid_encoding'; path: string; detail: string }

/** Why a call was cut off (`timed_out`, `cancelled`), and the last progress line it reported. */
export type AbortParams = AbortCause & {
  /** The tool's progress line last reported before the abort (its own words). */
  lastProgress?: string
}

/** Why a call was cut off, keyed by `cause`. */
export type AbortCause =
  /** The tool's timeout passed while it ran. */
  | { cause: 'timeout'; timeoutMs: number }
  /** It waited `timeoutMs` for a place under `maxRunning` (`caps`: the full ones, `label: cap`) and did not start. */
  | { cause: 'queue_timeout'; timeoutMs: number; caps: string }
  /** Its batch was cancelled (the caller's signal). */
  | { cause: 'batch' }
  /** Its background task was cancelled: by the model (`task_cancel`), as the background service stopped, or for `reason`. */
  | { cause: 'task'; by?: 'model' | 'service_stopped'; reason?: string }
  /** Its tool was unloaded or replaced (`tool`), or the tool service stopped (no `tool`). */
  | { cause: 'unloaded'; tool?: string; replaced?: true }
  /** Any other reason, in the words of whoever aborted it. */
  | { cause: 'other'; reason: string }

/**
 * The parameters of each `ToolResultCode`'s message (`ToolResult.params`), so a host can
 * tell a person the outcome in their locale while the model reads `content`:
 * `describeResult(result, 'zh-CN')`. Pair them with `resultMessage(result)` for a switch
 * on `code` that the compiler checks is exhaustive.
 */
export interface ResultParamsByCode {
  /** The model named no tool, or one not defined: `suggestions` are the close names, `available` the first 20 defined (`more` when there are others). */
  unknown_tool: { name?: string; suggestions: string[]; available: string[]; more: boolean }
  invalid_arguments: ArgumentsRefusal
  /** The tool threw: `message` in its own words. */
  tool_error: { message: string }
  permission_denied: Denial
  /** No permission service is loaded, so only read-only tools run: this one has `effect`. */
  no_permission_service: { tool: string; effect: Effect }
  timed_out: AbortParams
  cancelled: AbortParams
  /** The call went on as background task `taskId` (`resumed`: approved after a restart). */
  background: { taskId: string; resumed?: true }
  /** A middleware (`middleware`, its name; `plugin`, the plugin that registered it) failed: `failure` says how. */
  middleware_error: { middleware: string; plugin?: string; failure: MiddlewareFailure }
  /**
   * A quota was used up (`source: 'quota'`: `quota`'s `max` calls per `windowMs`), or the
   * tool's upstream refused for now (`'tool'`: its `reason`, in its words). `retryAfterMs`
   * as on the result.
   */
  rate_limited:
    | { source: 'quota'; quota: string; max: number; windowMs: number; retryAfterMs: number }
    | { source: 'tool'; reason: string; retryAfterMs?: number }
  /** A quota's count could not be read or written: `error`, the store's message. */
  quota_unavailable: { error: string }
  /** The tool's `data` does not match its `output` schema. */
  output_invalid: { problems: ArgumentProblem[] }
}

/**
 * How a middleware failed: it threw (`message`), returned no result (`got`, as JSON; absent
 * for nothing), a result with an invalid `status` (as JSON) or without content, or rewrote
 * the arguments into ones the call cannot take (`rewrite`, as an approver's edit is refused).
 */
export type MiddlewareFailure =
  | { kind: 'threw'; message: string }
  | { kind: 'no_result'; got?: string }
  | { kind: 'bad_status'; status: string }
  | { kind: 'no_content' }
  | { kind: 'rewrite'; refusal: RevisionRefusal }

/**
 * Why new arguments for a call (an approver's edit, a middleware's rewrite) were refused:
 * - `not_object`: not a JSON object; `not_json`: not serializable (`detail`, English).
 * - `too_large`: `length` characters of JSON, over `max`.
 * - `validation`: the tool's schema refused them.
 * - `permission`: the tool's `permission()` threw on them (`error`).
 * - `unknown_field`: an edit set `key` at `path`, which the schema does not name there
 *   (`names`: the fields there; `suggestion`: the closest).
 * - `not_editable`: the request takes no edited arguments; `check_failed`: checking threw (`error`).
 * - `needs_approver`: the edited call needs the approval of others (`approvers`, English).
 */
export type RevisionRefusal =
  | { kind: 'not_object' }
  | { kind: 'not_json'; detail: string }
  | { kind: 'too_large'; length: number; max: number }
  | { kind: 'validation'; problems: ArgumentProblem[] }
  | { kind: 'permission'; error: string }
  | { kind: 'unknown_field'; path: string; key: string; names: readonly string[]; suggestion?: string }
  | { kind: 'not_editable' }
  | { kind: 'check_failed'; error: string }
  | { kind: 'needs_approver'; approvers: string }

/** The parameters of any code's message. */
export type ResultParams = ResultParamsByCode[keyof ResultParamsByCode]

/** A result's `code` with its parameters, as one value a `switch (message.code)` narrows. */
export type ResultMessage = { [C in keyof ResultParamsByCode]: { code: C; params: ResultParamsByCode[C] } }[keyof ResultParamsByCode]

