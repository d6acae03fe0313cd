import { describeApprovers } from '../permissions/may-answer'
import { formatIssues, issueMessage } from '@dogu/schema'
import { shownKey } from '../duplicate-key'
import { formatDuration } from '../quotas/duration'
import type { AbortCause, AbortParams, ArgumentProblem, ArgumentsRefusal, MiddlewareFailure, RevisionRefusal } from '../result-params'
import type { PermissionSpec } from '../types/effect'
import type { AskedFor, Denial, RuleCause } from '../types/denial'
import type { MessageCatalogue, RevisionBy } from './catalogue'
import { formatDurationFor } from './format-duration-for'

/** Where a developer reads how to register an asker, named in the denial when there is none. */
export const ASKER_HINT = 'register one with ctx.permissions.asker(...) (see docs/permissions.md)'

const VERB = { allow: 'allows', ask: 'asks for', deny: 'denies' } as const

/**
 * The model's English: every message a result's `content` is made of, from the result's
 * parameters. The pipeline writes `content` with this catalogue, so each message's wording
 * lives here alone; a host's en-US rendering for a person is the same text.
 */
export const enUS: MessageCatalogue = {
  locale: 'en-US',
  terms: {
    status: { ok: 'ok', error: 'error', denied: 'denied', timed_out: 'timed out', cancelled: 'cancelled', background: 'moved to the background', rate_limited: 'over a quota' },
    code: {
      unknown_tool: 'unknown tool',
      invalid_arguments: 'invalid arguments',
      tool_error: 'tool error',
      permission_denied: 'permission denied',
      no_permission_service: 'no permission service',
      timed_out: 'timed out',
      cancelled: 'cancelled',
      background: 'moved to the background',
      middleware_error: 'middleware error',
      rate_limited: 'rate limited',
      quota_unavailable: 'quota unavailable',
      output_invalid: 'output does not match its schema',
    },
    mode: { default: 'default', readOnly: 'read-only', acceptEdits: 'accept edits', trust: 'trust' },
    effect: { read: 'read', write: 'write', exec: 'exec' },
    scope: { once: 'once', session: 'this session', always: 'always' },
    repairStep: {
      'fence': 'a code fence removed',
      'full-width': 'full-width punctuation made ASCII',
      'quotes': 'single quotes made double',
      'unquoted-keys': 'keys quoted',
      'trailing-comma': 'a trailing comma removed',
      'comments': 'comments removed',
      'python-literals': 'Python literals made JSON',
      'double-encoded': 'JSON encoded twice unwrapped',
      'closing-brackets': 'the closing brace added',
    },
  },
  results: {
    unknown_tool: ({ name, suggestions, available, more }) => {
      if (name === undefined) return 'Unknown tool: the call has no tool name.'
      const hint = suggestions.length ? ` Did you mean ${suggestions.map((n) => `"${n}"`).join(', ')}?` : ''
      return `Unknown tool "${name}".${hint} Available tools: ${available.join(', ')}${more ? ', …' : ''}.`
    },
    invalid_arguments: (params) => argumentsRefusal(params),
    tool_error: ({ message }) => `Error: ${message}`,
    permission_denied: (denial) => `Permission denied: ${denialText(denial)}`,
    no_permission_service: ({ tool, effect }) => `Permission denied: no permission service is loaded, so only read-only tools may run ("${tool}" has effect "${effect}").`,
    timed_out: (params) => aborted('Timed out', params),
    cancelled: (params) => aborted('Cancelled', params),
    background: ({ taskId, resumed }) => resumed
      ? `Approved after a restart, the call runs in the background as task ${taskId}. Check it with task_status({ "id": "${taskId}" }).`
      : `The call is still running and continues in the background as task ${taskId}. Check it later with task_status({ "id": "${taskId}" }) or stop it with task_cancel.`,
    middleware_error: (params) => `Error: ${middlewareLabel(params)} failed: ${middlewareFailureText(params.failure)}`,
    rate_limited: (params) => params.source === 'quota'
      ? `Rate limited: quota '${params.quota}' used: ${params.max} per ${formatDuration(params.windowMs)}; try again in ${formatDuration(params.retryAfterMs)}.`
      : params.reason.startsWith('Rate limited:') ? params.reason : `Rate limited: ${params.reason}`,
    quota_unavailable: ({ error }) => `Error: the call did not run: its quota could not be counted (${error}).`,
    output_invalid: ({ problems }) => `Error: the tool's result does not match its output schema (${problems.map((problem) => `${problem.path}: ${issueMessage(problem)}`).join('; ')}).`,
  },
  denial: denialText,
  decided: decidedText,
  problem: issueMessage,
  problemLine: (problem) => `- ${problem.path}: ${issueMessage(problem)}`,
  revision: revisionText,
  repaired: (steps) => `Note: your arguments were not valid JSON; they were repaired (${steps.join(', ')}) before the call ran. Send strict JSON.`,
  edited: (changes) => `A person changed your arguments before approving this call; it ran with these changes:\n${changes.join('\n')}`,
  folded: (count, unit) => `[${count} ${unit} folded]`,
  duration: (ms, options) => formatDurationFor(ms, 'en-US', options),
}

/** `Invalid arguments:` and one line per problem, as `formatIssues` writes them. */
function validationText(problems: readonly ArgumentProblem[]): string {
  return formatIssues(problems.map((problem) => ({ ...problem, message: issueMessage(problem) })))
}

function argumentsRefusal(refusal: ArgumentsRefusal): string {
  const unrepairable = (text: string, why: string | undefined) => why === undefined ? text : `${text} They cannot be repaired without guessing: ${why}.`
  switch (refusal.kind) {
    case 'validation': return validationText(refusal.problems)
    case 'invalid_json': return unrepairable(`Arguments are not valid JSON (${refusal.detail}). Send a JSON object.`, refusal.unrepairable)
    case 'not_object': return unrepairable(`Arguments must be a JSON object, got ${refusal.got === 'array' ? 'an array' : refusal.got}.`, refusal.unrepairable)
    case 'too_large': return `Arguments are too large: ${refusal.length} characters, at most ${refusal.max} are accepted.`
    case 'duplicate_key': return `Arguments have a duplicate key ${shownKey(refusal.key)} at ${refusal.path}: which of its values was meant cannot be known. Send each key once.`
    case 'forbidden_key': return `Arguments use a forbidden key at ${refusal.path}${refusal.deep ? ' (nested too deeply)' : ''}. Rename or remove it.`
    case 'invalid_encoding': return `Arguments are invalid: ${refusal.detail}`
  }
}

function aborted(label: string, params: AbortParams): string {
  const content = `${label}: ${abortReason(params)}.`
  return params.lastProgress ? `${content} Last progress: ${params.lastProgress}` : content
}

/** Why a call was aborted, as `ActiveCall.abortMessage` says it. */
export function abortReason(params: AbortCause): string {
  switch (params.cause) {
    case 'timeout': return `timed out after ${Math.round(params.timeoutMs / 100) / 10}s`
    case 'queue_timeout': return `waited ${formatDuration(params.timeoutMs)} for a place to run and did not start (${params.caps})`
    case 'batch': return 'the batch was cancelled'
    case 'task': return params.by === 'model' ? 'the model cancelled the task with task_cancel' : params.by === 'service_stopped' ? 'the background service stopped' : params.reason ?? 'the background task was cancelled'
    case 'unloaded': return params.tool === undefined ? 'the tool service stopped' : `tool "${params.tool}" was ${params.replaced ? 'replaced' : 'unloaded'}`
    case 'other': return params.reason
  }
}

/** A middleware as logs and results name it: `middleware "audit" (my-plugin)`. */
export function middlewareLabel({ middleware, plugin }: { middleware: string; plugin?: string }): string {
  return plugin ? `middleware "${middleware}" (${plugin})` : `middleware "${middleware}"`
}

/** How a middleware failed, as its `middleware_error` result says after its name. */
export function middlewareFailureText(failure: MiddlewareFailure): string {
  switch (failure.kind) {
    case 'threw': return failure.message
    case 'no_result': return `it returned ${failure.got ?? 'nothing'} instead of a result`
    case 'bad_status': return `it returned a result with status ${failure.status}`
    case 'no_content': return 'it returned a result without a content string'
    case 'rewrite': return revisionText(failure.refusal, 'middleware')
  }
}

function revisionText(refusal: RevisionRefusal, by: RevisionBy): string {
  const edit = by === 'edit'
  switch (refusal.kind) {
    case 'not_object': return edit ? 'the edited arguments must be a JSON object' : 'it passed arguments that are not a JSON object'
    case 'not_json': return edit ? `the edited arguments are not JSON: ${refusal.detail}` : `it passed arguments that are not JSON: ${refusal.detail}`
    case 'too_large': return `${edit ? 'the edited arguments are' : 'its arguments are'} ${refusal.length} characters long; the limit is ${refusal.max}`
    case 'validation': return edit ? validationText(refusal.problems) : `it rewrote the arguments into ones the tool's schema refuses: ${validationText(refusal.problems)}`
    case 'permission': return `the ${edit ? 'edited' : 'rewritten'} call's permission could not be worked out: ${refusal.error}`
    case 'unknown_field': {
      const hint = refusal.suggestion === undefined ? '' : ` — did you mean \`${refusal.suggestion}\`?`
      const known = refusal.names.length ? ` The fields there are: ${refusal.names.map((name) => `\`${name}\``).join(', ')}.` : ''
      return `the edited arguments set \`${refusal.key}\` at ${refusal.path}, which is not a field of this tool's arguments${hint}${known}`
    }
    case 'not_editable': return 'this request does not take edited arguments'
    case 'check_failed': return `the edited arguments could not be checked: ${refusal.error}`
    case 'needs_approver': return `the edited call needs the approval of ${refusal.approvers}`
  }
}

function denialText(denial: Denial): string {
  switch (denial.cause) {
    case 'rule': return denial.decided ? decidedText(denial.decided) : 'a permission rule denies it'
    case 'declined': return `${denial.by} declined it${denial.reason ? `: ${denial.reason}` : ''}`
    case 'expired': return `timed out waiting for approval (no answer within ${approvalTimeout(denial.timeoutMs)})`
    case 'cancelled': return denial.when === 'waiting' ? 'the call was cancelled while waiting for approval' : 'the call was cancelled before approval was asked'
    case 'no_asker': return `it needs a person's approval (${decidedText(denial.asked)}), but no asker is registered to ask anyone: ${ASKER_HINT}`
    case 'unreachable': return `nobody could be asked to ${denial.elicitation ? `answer the question of ${denial.tool}` : `approve ${denial.tool}`} (${denial.why.join('; ')})`
    case 'askers_failed': return `every asker failed to show the permission request (last error: ${denial.error})`
    case 'askers_unloaded': return 'every asker showing the permission request was unloaded before anyone answered'
    case 'answer_refused': return denial.approvers ? `the approval given by ${denial.by} does not count: only ${describeApprovers(denial.approvers)} may approve it` : `the approval given by ${denial.by} was malformed and does not count`
    case 'stopped':
      if (denial.kept) return 'interrupted while waiting for approval (the request is kept and asked again after a restart)'
      return denial.when === 'waiting' ? 'the permissions service stopped while waiting for approval' : 'the permissions service is stopped'
    case 'elsewhere': {
      const where = denial.instance ? `another instance (${denial.instance})` : 'another instance'
      return denial.closed !== undefined
        ? `the request was closed on ${where} (${denial.closed})`
        : `the request was answered on ${where}${denial.by ? ` by ${denial.by}` : ''}; the call runs there, not here`
    }
    case 'edit_denied': return `${denial.by} edited the arguments, and the edited call is denied: ${denialText(denial.denial)}`
    case 'rewrite_denied': return `${middlewareLabel(denial)} rewrote the call, and the rewritten call is denied: ${denialText(denial.denial)}`
    case 'no_service': return 'asked' in denial
      ? `no permission service is loaded to approve it (${denial.asked})`
      : `no permission service is loaded, so only read-only tools may run (the rewritten call has effect "${denial.effect}")`
    case 'check_failed': return `the permission check failed: ${denial.error}`
    case 'no_decision': return `the permission check returned no valid decision (got ${denial.got})`
    case 'unvalidated_edit': return 'the permission service approved arguments the pipeline did not validate'
    case 'not_approved': return 'the request was not approved'
    case 'approval_changed': return `it was approved after a restart for ${permissionText(denial.approved)}, but the call now needs ${permissionText(denial.needs)}`
    case 'tool': case 'middleware': case 'gate': return denial.reason
  }
}

function decidedText(cause: RuleCause | AskedFor): string {
  switch (cause.kind) {
    case 'rule': {
      const what = `${cause.permission}${cause.target ? ` on ${cause.target}` : cause.command ? ` on ${cause.command}` : ''}${cause.sandboxed === undefined ? '' : cause.sandboxed ? ', sandboxed' : ', unsandboxed'}`
      return `rule ${cause.name ? `"${cause.name}"` : `(${what})`} from ${cause.origin} ${VERB[cause.decision]} it`
    }
    case 'mode': return `the session is in ${cause.mode} mode, which ${cause.decision === 'deny' ? 'denies' : 'allows'} ${cause.effect} tools`
    case 'default': return cause.decision === 'allow' ? `no rule matches; ${cause.effect} tools are allowed by default` : `no rule matches; ${cause.effect} tools need approval by default`
    case 'grant': return `a remembered "${cause.scope}" approval by ${cause.by} allows it (${cause.id})`
    case 'malformed': return 'the call named no valid permission (a permission name string, an optional target string, and a session with an id are required)'
    case 'tool': return cause.reason
  }
}

/** A permission as a denial names it: `"fs.write" on "out.txt"`. */
export function permissionText(permission: Readonly<Pick<PermissionSpec, 'name' | 'target'>>): string {
  return permission.target === undefined ? `"${permission.name}"` : `"${permission.name}" on ${JSON.stringify(permission.target)}`
}

/** An approval's timeout as its denial says it: `20s`, `5 min`, `1500 ms`. */
function approvalTimeout(ms: number): string {
  if (ms % 60_000 === 0) return `${ms / 60_000} min`
  if (ms % 1000 === 0) return `${ms / 1000}s`
  return `${ms} ms`
}
