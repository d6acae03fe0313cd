import { messageOf } from '../error-message'
import type { DecisionSource } from '../permissions/permission-decision'
import type { Session } from '../session'
import type { Draft } from './audit-draft'
import type { AuditCaller, AuditDecider, AuditRecord } from './audit-record'
import { canonicalJson, sha256 } from './canonical-json'

/**
 * Turns queued drafts into records, in the batch: ids, the caller and decider objects
 * (one per session and per rule, shared by their records) and the arguments, hashed where
 * configured or too long.
 */
export class RecordFinisher {
  /** Ids are this log's random prefix and a counter: unique across instances, cheap per record. */
  private readonly idPrefix = `aud_${globalThis.crypto.randomUUID().replace(/-/g, '').slice(0, 16)}_`
  private sequence = 0
  private callers = new WeakMap<object, AuditCaller>()
  private deciders = new WeakMap<object, AuditDecider | undefined>()

  constructor(
    private readonly hashAll: boolean,
    private readonly hashed: ReadonlySet<string>,
    private readonly maxArgumentsLength: number,
  ) {}

  /** The record of a draft: synchronous unless its arguments are hashed. */
  finish(draft: Draft): AuditRecord | Promise<AuditRecord> {
    const preset = draft.preset
    const record: AuditRecord = preset
      // `id` and `at` first, then `early`, as in every line the file store writes (it reads them from there).
      ? (({ id, at, ...rest }) => rest.early === true ? { id: id ?? this.nextId(), at, early: true as const, ...rest } : { id: id ?? this.nextId(), at, ...rest })(preset)
      : draft.early
        ? { id: this.nextId(), at: draft.at, early: true, endedAt: draft.at + draft.elapsed, tool: draft.tool, callId: draft.callId, caller: this.callerOf(draft.session), outcome: draft.outcome, durationMs: draft.durationMs }
        : { id: this.nextId(), at: draft.at, endedAt: draft.at + draft.elapsed, tool: draft.tool, callId: draft.callId, caller: this.callerOf(draft.session), outcome: draft.outcome, durationMs: draft.durationMs }
    if (draft.count > 1) record.count = draft.count
    if (!preset) {
      // A record carries only what its call had: a draft's fields are `undefined` when unset.
      const decided = this.deciderOf(draft.decided)
      if (decided) record.decided = decided
      if (draft.ask) record.ask = draft.ask
      if (draft.code !== undefined) record.code = draft.code
      if (draft.reason !== undefined) record.reason = draft.reason
      if (draft.taskId !== undefined) record.taskId = draft.taskId
      if (draft.waitMs !== undefined) record.waitMs = draft.waitMs
      if (draft.repaired) record.repaired = { steps: [...draft.repaired.steps] }
      if (draft.resumes) record.resumes = draft.resumes
    }
    const args = preset ? preset.args : draft.args
    delete record.args
    if (args === undefined) return record
    let json: string | undefined
    if (!this.hashAll && !this.hashed.has(record.tool)) {
      try {
        json = JSON.stringify(args)
      } catch (error) {
        record.args = `[arguments not JSON: ${messageOf(error)}]`
        return record
      }
      // The validated arguments, as the tool saw them: the call has ended, nothing changes them now.
      if (json === undefined || json.length <= this.maxArgumentsLength) {
        record.args = args
        draft.argsJson = json
        return record
      }
    }
    try {
      json = canonicalJson(args)
    } catch (error) {
      json = JSON.stringify(`[arguments not JSON: ${messageOf(error)}]`)
    }
    return sha256(json).then((hash) => {
      record.argsHash = hash
      return record
    })
  }

  /** A session's caller, shared by its records while the session says the same. */
  callerOf(session: Session | undefined): AuditCaller {
    if (!session || typeof session !== 'object') return callerOf(session)
    let caller = this.callers.get(session)
    // A session is the host's object: reuse its copy only while it still says the same.
    if (!caller || caller.sessionId !== session.id || caller.userId !== session.userId || caller.authority !== session.authority || caller.platform !== session.platform || caller.channelId !== session.channelId || caller.guildId !== session.guildId) {
      caller = Object.freeze(callerOf(session))
      this.callers.set(session, caller)
    }
    return caller
  }

  private nextId(): string {
    return this.idPrefix + (this.sequence++).toString(36)
  }

  private deciderOf(source: DecisionSource | undefined): AuditDecider | undefined {
    if (!source) return undefined
    if (this.deciders.has(source)) return this.deciders.get(source)
    const decider = deciderOf(source)
    if (decider) Object.freeze(decider)
    this.deciders.set(source, decider)
    return decider
  }
}

function callerOf(session: Session | undefined): AuditCaller {
  const caller: AuditCaller = { sessionId: session?.id ?? '' }
  if (!session) return caller
  if (session.platform !== undefined) caller.platform = session.platform
  if (session.userId !== undefined) caller.userId = session.userId
  if (session.channelId !== undefined) caller.channelId = session.channelId
  if (session.guildId !== undefined) caller.guildId = session.guildId
  if (session.authority !== undefined) caller.authority = session.authority
  return caller
}

function deciderOf(source: DecisionSource | undefined): AuditDecider | undefined {
  switch (source?.kind) {
    case 'rule': {
      const decider: AuditDecider = { kind: 'rule', id: source.id, origin: source.origin, decision: source.rule.decision, permission: source.rule.permission }
      if (source.rule.name !== undefined) decider.name = source.rule.name
      return decider
    }
    case 'grant': return { kind: 'grant', id: source.grant.id, scope: source.grant.scope, by: source.grant.by }
    case 'mode': return { kind: 'mode', mode: source.mode }
    case 'default': return { kind: 'default', effect: source.effect }
    case 'middleware': return { kind: 'middleware', name: source.name }
    case 'quota': return { kind: 'quota', name: source.name }
    default: return undefined
  }
}
