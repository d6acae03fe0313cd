import type { ApprovalRequest, AuthorizeRequest } from '../permission-gate'
import { SECRET_MASK } from '../secret-fields'
import type { Session } from '../session'
import type { InputQuestion, PermissionRequest } from './asker'
import type { PendingRecord, ResumeHandler, StoredSession } from './pending-record'
import { messageOf } from '../error-message'
import { enUS } from '../messages/en-us'
import type { RevisionRefusal } from '../result-params'

/** Deeper than any arguments a call carries; stops a cyclic value. */
const MAX_DEPTH = 64

/** What a host keeps of a session beyond Dogu's fields (`PermissionEngineOptions.sessionHost`). */
export type SessionHost = (session: Session) => StoredSession['host'] | undefined

/**
 * The record a pending store keeps of a pipeline's question: the call as askers were shown
 * it, with the arguments masked as they already are (`CallInfo.args`). `masked` when they hold
 * a masked secret field, `inRun` for a tool's own `call.ask` from inside its run.
 */
export function recordOf(input: ApprovalRequest, shown: PermissionRequest, instance: string, sessionHost?: SessionHost): PendingRecord {
  const record: PendingRecord = {
    id: shown.id,
    callId: shown.callId,
    tool: shown.tool,
    permission: { ...input.permission },
    effect: shown.effect,
    summary: shown.summary,
    reason: shown.reason,
    session: storedSession(input.session, sessionHost),
    approvers: shown.approvers,
    createdAt: shown.createdAt,
    expiresAt: shown.expiresAt,
    instance,
  }
  if (shown.args !== undefined) record.args = shown.args
  if (holdsMask(shown.args, 0)) record.masked = true
  if (shown.asked) record.asked = shown.asked
  if (shown.preview) record.preview = shown.preview
  if (shown.repaired) record.repaired = shown.repaired
  if (shown.confirm) record.confirm = shown.confirm
  // The pipeline's own asks pass the permission's reason; a tool's `call.ask` passes its own words.
  if (input.inRun || (input.reason !== undefined && input.reason !== input.permission?.reason)) record.inRun = true
  return record
}

function storedSession(session: Session, sessionHost: SessionHost | undefined): StoredSession {
  const stored: StoredSession = { id: session.id }
  for (const field of ['userId', 'channelId', 'guildId', 'platform', 'cwd'] as const) {
    if (typeof session[field] === 'string') stored[field] = session[field]
  }
  if (typeof session.authority === 'number') stored.authority = session.authority
  const host = sessionHost?.(session)
  if (host && Object.keys(host).length) stored.host = { ...host }
  return stored
}

/** Whether `value` holds a secret field's mask (`maskSecrets` writes it for every secret it hides). */
function holdsMask(value: unknown, depth: number): boolean {
  if (value === SECRET_MASK) return true
  if (!value || typeof value !== 'object' || depth > MAX_DEPTH) return false
  return Object.values(value).some((inner) => holdsMask(inner, depth + 1))
}

/** The call a record asks about, as the rules see it: what is decided again at an answer. */
export function requestOf(record: Readonly<PendingRecord>): AuthorizeRequest & { callId: string } {
  const request: AuthorizeRequest & { callId: string } = {
    callId: record.callId,
    session: record.session,
    permission: record.permission,
    effect: record.effect,
    tool: record.tool,
    args: record.args,
  }
  if (record.confirm) request.confirm = record.confirm
  return request
}

/**
 * The question a record is asked again as: a new id (answers bind to the live request, so
 * the old buttons are refused), `restored`, the first ask's times, and the edit form when
 * the tools host gives the tool's schema and a check (`ResumeHandler.schema`, `check`). Frozen.
 */
export function restoredQuestion(record: Readonly<PendingRecord>, at: number, handler: ResumeHandler | undefined, id = `perm_${globalThis.crypto.randomUUID()}`): PermissionRequest {
  const input = handler ? editForm(record, handler) : undefined
  return Object.freeze({
    id,
    callId: record.callId,
    session: Object.freeze({ ...record.session }),
    tool: record.tool,
    permission: Object.freeze({ ...record.permission }),
    effect: record.effect,
    summary: record.summary,
    ...(record.args !== undefined ? { args: record.args } : {}),
    reason: record.reason,
    ...(record.asked ? { asked: record.asked } : {}),
    approvers: Object.freeze({ ...record.approvers }),
    ...(record.preview ? { preview: Object.freeze({ ...record.preview }) } : {}),
    ...(record.repaired ? { repaired: record.repaired } : {}),
    ...(input ? { input } : {}),
    ...(record.confirm ? { confirm: record.confirm } : {}),
    createdAt: record.createdAt,
    expiresAt: record.expiresAt,
    restored: Object.freeze({ at, originalId: record.id, instance: record.instance }),
  })
}

function editForm(record: Readonly<PendingRecord>, handler: ResumeHandler): Readonly<InputQuestion> | undefined {
  const schema = safely(() => handler.schema?.(record.tool))
  if (!schema || typeof handler.check !== 'function') return undefined
  return Object.freeze({
    schema,
    message: 'Edit the arguments before approving: the edited call is checked and authorized again.',
    initial: record.args,
    check(value: unknown) {
      const checked = checkEdit(handler, record, value)
      return 'error' in checked ? checked.error : undefined
    },
    resolve(value: unknown) {
      const checked = checkEdit(handler, record, value)
      if (!('error' in checked)) return { args: checked.args, changes: checked.changes }
      return checked.refusal ? { error: checked.error, refusal: checked.refusal } : { error: checked.error }
    },
  })
}

/** `handler.check` of an edit to `record`'s call, with a throw as the edit's error. */
export function checkEdit(handler: ResumeHandler, record: Readonly<PendingRecord>, value: unknown): ReturnType<NonNullable<ResumeHandler['check']>> {
  if (typeof handler.check !== 'function') return { error: 'edited arguments cannot be checked on this instance', refusal: { kind: 'not_editable' } }
  try {
    return handler.check(record.tool, value, record)
  } catch (error) {
    const refusal: RevisionRefusal = { kind: 'check_failed', error: messageOf(error) }
    return { error: enUS.revision(refusal, 'edit'), refusal }
  }
}

function safely<T>(get: () => T): T | undefined {
  try {
    return get()
  } catch {
    return undefined
  }
}
