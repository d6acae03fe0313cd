import type Schema from 'schemastery'
import { ActiveCall, type CallHooks } from '../active-call'
import { editorFor } from '../argument-editor'
import { CallPipeline } from '../call-pipeline'
import { messageOf } from '../error-message'
import type { ResumedFrom } from '../events'
import type { RevisedCall } from '../permission-gate'
import type { PendingRecord, ResumeFailure, ResumeHandler, ResumedCall, StoredSession } from '../permissions/pending-record'
import type { Session } from '../session'
import { ToolDenial } from '../tool-denial'
import type { ToolEntry } from '../tool-entry'
import type { PermissionSpec } from '../types/effect'
import type { RevisionRefusal } from '../result-params'
import { enUS } from '../messages/en-us'
import type { PipelineHost, PipelineLimits } from './pipeline-host'
import { preApprove } from './pre-approval'

/** What `ResumeCalls` reads of its registry, at the moment it is asked. */
export interface ResumeHost {
  readonly pipeline: PipelineHost
  readonly limits: PipelineLimits
  /** The registered tool of this name. */
  entry(name: string): ToolEntry | undefined
}

/** What a resumed call's id adds to the asking call's: the two are linked, and never equal. */
export const RESUMED_SUFFIX = '/resumed'

/** Requests resumed here that are remembered, so a second resume of one is refused; the oldest are forgotten first. */
const MAX_REMEMBERED = 10_000

/** The `call` of an edit being checked: it never runs, so it asks no one. */
const CHECK_HOOKS: CallHooks = {
  progress() {},
  ask: () => Promise.reject(new ToolDenial('an edit is being checked; nothing runs')),
  elicit: () => Promise.resolve({ action: 'cancel', reason: 'an edit is being checked; nothing runs' }),
  log() {},
  aborted() {},
  expired() {},
}

/**
 * The tools side of an answer given after a restart (`permissions.durable`): a `ToolRegistry`
 * registers one on its permission engine (`onResume`). The engine has checked the answerer,
 * claimed the request and decided the call again; this runs it once, through the pipeline,
 * as a background task of the session that asked. The call is validated again, passes its
 * quotas, caps, middlewares, schedule, run and settle (redaction, `tools/call-end`, the audit
 * log) like any call, and is asked about by no one: the engine's decision is the call's
 * authorization (`preApprove`), for the permission it approved and nothing else.
 */
export class ResumeCalls implements ResumeHandler {
  /** Request ids resumed here, oldest first. */
  private started = new Set<string>()
  /**
   * The permission `check` worked out for an edit, by the arguments object it returned:
   * the engine authorizes that permission and passes the same object back as `ResumedCall.args`.
   */
  private checked = new WeakMap<object, PermissionSpec>()
  /** Edited calls `check`'s editors made (the editor's own bookkeeping). */
  private revised = new WeakSet<RevisedCall>()

  constructor(private host: ResumeHost) {}

  defines(tool: string): boolean {
    return typeof tool === 'string' && this.host.entry(tool) !== undefined
  }

  /** The tool's arguments schema, for the edit form, when it has fields to edit. */
  schema(tool: string): Schema | undefined {
    const schema = typeof tool === 'string' ? this.host.entry(tool)?.tool.args : undefined
    return schema?.type === 'object' && Object.keys(schema.dict ?? {}).length ? schema : undefined
  }

  /**
   * An approver's edit, checked as the pipeline checks one before it is approved (the
   * pipeline's own editor, `editorFor`): fields the schema names only, the tool's validator,
   * the edited call's `permission()` for the record's session. `record`: the request the edit
   * is for; without it the changes are counted from empty arguments, and no permission is
   * given (the engine then authorizes the record's, and a call that needs another is denied
   * when it runs).
   */
  check(tool: string, args: unknown, record?: Readonly<PendingRecord>): { args: unknown; changes: readonly string[]; permission?: PermissionSpec } | { error: string; refusal?: RevisionRefusal } {
    const entry = typeof tool === 'string' ? this.host.entry(tool) : undefined
    if (!entry) return { error: `the tool "${tool}" is not defined on this instance`, refusal: { kind: 'not_editable' } }
    const call = new ActiveCall(record?.callId ?? '', entry, sessionOf(record?.session ?? { id: '' }), record?.args ?? {}, CHECK_HOOKS)
    const editor = editorFor(call, this.host.limits.maxArgumentsLength, this.revised)
    if (!editor) return { error: `the tool "${entry.tool.name}" takes no arguments to edit`, refusal: { kind: 'not_editable' } }
    let revised: ReturnType<typeof editor.revise>
    try {
      revised = editor.revise(args)
    } catch (error) {
      const refusal: RevisionRefusal = { kind: 'check_failed', error: messageOf(error) }
      return { error: enUS.revision(refusal, 'edit'), refusal }
    }
    if ('error' in revised) return revised.refusal ? { error: revised.error, refusal: revised.refusal } : { error: revised.error }
    if (!record) return { args: revised.input, changes: revised.changes }
    const permission = revised.request.permission
    if (revised.input && typeof revised.input === 'object') this.checked.set(revised.input, permission)
    return { args: revised.input, changes: revised.changes, permission }
  }

  /**
   * Runs the call once: a second resume of the same request here is refused, and so is one
   * whose tool is gone, hidden from the session now, or whose arguments no longer validate.
   * Resolves with the task's id (`''` when no background service is loaded: the call then
   * runs all the same, and its result reaches only `tools/call-end` and the audit log).
   */
  async resume(resumed: ResumedCall): Promise<{ taskId: string }> {
    const { record } = resumed
    if (this.started.has(record.id)) throw failed(`permission request ${record.id} was already resumed on this instance; its call runs once`, { kind: 'resumed' })
    this.remember(record.id)
    const entry = this.host.entry(record.tool)
    if (!entry) throw failed(`the tool "${record.tool}" is no longer defined on this instance`, { kind: 'undefined_tool', tool: record.tool })
    if (resumed.args !== undefined && (!resumed.args || typeof resumed.args !== 'object' || Array.isArray(resumed.args))) throw failed('its arguments are not an object', { kind: 'not_object' })
    const session = sessionOf(record.session)
    if (!visibleTo(entry, session)) throw failed(`the tool "${record.tool}" is no longer available to session ${session.id} (its visibility hides it)`, { kind: 'hidden', tool: record.tool, session: session.id })
    const pipeline = new CallPipeline(this.host.pipeline, new Map([[entry.tool.name, entry]]), session, this.host.limits)
    const input = { id: `${record.callId}${RESUMED_SUFFIX}`, name: entry.tool.name, arguments: resumed.args as Record<string, unknown> | undefined }
    const call = pipeline.prepareResumed(input, resumedFrom(resumed))
    if (!(call instanceof ActiveCall)) throw failed(`its arguments no longer validate: ${call.content}`, { kind: 'invalid', result: call })
    if (resumed.changes?.length) call.edits = resumed.changes
    const approved = this.approvedFor(resumed)
    preApprove(call, approved)
    // Worked out already (the authorize stage works it out again): its record is no early refusal.
    call.permission = approved
    return { taskId: pipeline.startResumed(call, this.host.pipeline.background) ?? '' }
  }

  /** What the engine authorized: an edit's own permission (`check`'s), else the record's. */
  private approvedFor({ record, args, changes }: ResumedCall): PermissionSpec {
    const edited = changes?.length && args && typeof args === 'object' ? this.checked.get(args) : undefined
    return edited ?? record.permission
  }

  private remember(id: string) {
    this.started.add(id)
    if (this.started.size > MAX_REMEMBERED) this.started.delete(this.started.values().next().value!)
  }
}

/** The session a request was asked in, as a call's: its fields as stored, the host's own (`host`) kept. Frozen. */
export function sessionOf(stored: Readonly<StoredSession>): Session {
  const session: Session & { host?: StoredSession['host'] } = { id: String(stored.id) }
  for (const field of ['userId', 'channelId', 'guildId', 'platform', 'cwd'] as const) {
    if (typeof stored[field] === 'string') session[field] = stored[field]
  }
  if (typeof stored.authority === 'number') session.authority = stored.authority
  if (stored.host && typeof stored.host === 'object') session.host = Object.freeze({ ...stored.host })
  return Object.freeze(session)
}

/** What the resumed call's `CallInfo.resumes` says: the ask, and the answer after the restart. */
function resumedFrom({ record, by, scope, grant, via, changes }: ResumedCall): ResumedFrom {
  const from: ResumedFrom = { callId: record.callId, requestId: record.id, askedAt: record.createdAt, by: Object.freeze({ ...by }), scope }
  if (via !== undefined) from.via = via
  if (typeof grant?.id === 'string') from.grantId = grant.id
  if (changes?.length) from.edited = true
  if (record.approvers) from.approvers = record.approvers
  return Object.freeze(from)
}

/** A tool's `visibility` for the session; one that throws hides it, as it does from a toolset. */
function visibleTo(entry: ToolEntry, session: Session): boolean {
  const visibility = entry.tool.visibility
  if (!visibility) return true
  try {
    return !!visibility(session)
  } catch {
    return false
  }
}

/** An error a resume throws: its English message, and its structured form (`ResumeFailure`) for a person's locale. */
function failed(message: string, failure: ResumeFailure): Error & { failure: ResumeFailure } {
  return Object.assign(new Error(message), { failure })
}
