import { CALL_SERIAL } from '../events'
import type { DecisionEvent, DecisionSource } from '../permissions/permission-decision'
import type { AuditAsk, AuditAskEnd } from './audit-record'

/** What the decision events of one call said, until the call ends. */
export interface Pending {
  decided?: DecisionSource
  ask?: AuditAsk
  reason?: string
  /** The call's session and model id: how a call end that carries no serial finds it. */
  sessionId: string | undefined
  callId: string
}

/** What a call carries that the pipeline made: its own identity (`CALL_SERIAL`). */
export interface Serialed {
  [CALL_SERIAL]?: number
}

/** How a call's decisions are found at its end: the pipeline's serial, else session and model id. */
export type CallKey = number | string

/** Calls whose decisions are held awaiting their end; beyond it the oldest are dropped. */
const MAX_PENDING = 10_000

/** A source that decided without asking anyone (an authorize, or an approve a grant settled first). */
export function decides(kind: DecisionSource['kind']): boolean {
  return kind === 'rule' || kind === 'grant' || kind === 'mode' || kind === 'default' || kind === 'middleware' || kind === 'quota'
}

/**
 * The decisions of calls that have not ended, matched to their end by the pipeline's own
 * identity of the call (`CALL_SERIAL`), so two calls of a batch with the same model id keep
 * their own; by session and model id for a request that does not carry it (a host's own
 * gate or events). `take` hands the matched call's decisions to `decided`, `ask` and `reason`.
 */
export class PendingDecisions {
  /** What the last `take` found (all undefined when nothing matched). */
  decided: DecisionSource | undefined
  ask: AuditAsk | undefined
  reason: string | undefined
  private pending = new Map<CallKey, Pending>()
  /** How many calls are held by session and model id (in `pending` or as the latest). */
  private loose = 0
  /**
   * The latest call's decisions, in fields rather than an object: a call is usually decided
   * and ended before the next is decided, and then nothing is allocated and no map is
   * touched. A second call's decision moves it to the map. Undefined while none is held.
   */
  private lastKey: CallKey | undefined
  private lastSessionId: string | undefined
  private lastCallId: string | undefined
  private lastDecided: DecisionSource | undefined
  private lastAsk: AuditAsk | undefined
  private lastReason: string | undefined

  /** Holds a decision event of a call (`request.callId` set) until the call ends. */
  hold(event: DecisionEvent, callId: string): void {
    const request = event.request
    const serial = (request as Serialed)[CALL_SERIAL]
    const key: CallKey = serial !== undefined ? serial : keyOf(request.session?.id, callId)
    const source = event.source
    if (this.lastKey !== key) {
      const held = this.pending.size ? this.pending.get(key) : undefined
      if (held) {
        if (source && decides(source.kind)) held.decided = source
        else if (source) held.ask = askOf(event)
        held.reason = event.reason
        return
      }
      // A new call: the one held here (decided, not ended yet) moves to the map.
      if (this.lastKey !== undefined) {
        if (this.pending.size >= MAX_PENDING) {
          const oldest = this.pending.keys().next().value!
          this.pending.delete(oldest)
          if (typeof oldest === 'string') this.loose--
        }
        const moved: Pending = { sessionId: this.lastSessionId, callId: this.lastCallId! }
        if (this.lastDecided) moved.decided = this.lastDecided
        if (this.lastAsk) moved.ask = this.lastAsk
        moved.reason = this.lastReason
        this.pending.set(this.lastKey, moved)
      }
      if (typeof key === 'string') this.loose++
      this.lastKey = key
      this.lastSessionId = request.session?.id
      this.lastCallId = callId
      this.lastDecided = undefined
      this.lastAsk = undefined
    }
    // An authorize, or an approve decided again before anyone was asked (a grant appeared).
    if (source && decides(source.kind)) this.lastDecided = source
    else if (source) this.lastAsk = askOf(event)
    this.lastReason = event.reason
  }

  /** Finds and removes the decisions of a call that ended: by its serial, else by session and model id. */
  take(serial: number | undefined, sessionId: string | undefined, callId: string): void {
    const last = this.lastKey
    if (last !== undefined && (serial !== undefined && last === serial || (serial === undefined || typeof last === 'string') && this.lastCallId === callId && this.lastSessionId === sessionId)) {
      this.decided = this.lastDecided
      this.ask = this.lastAsk
      this.reason = this.lastReason
      if (typeof last === 'string') this.loose--
      this.lastKey = this.lastSessionId = this.lastCallId = this.lastDecided = this.lastAsk = this.lastReason = undefined
      return
    }
    const held = this.pending.size ? this.takeHeld(serial, sessionId, callId) : undefined
    this.decided = held?.decided
    this.ask = held?.ask
    this.reason = held?.reason
  }

  clear(): void {
    this.pending.clear()
    this.loose = 0
    this.lastKey = this.lastSessionId = this.lastCallId = this.lastDecided = this.lastAsk = this.lastReason = undefined
    this.decided = this.ask = this.reason = undefined
  }

  private takeHeld(serial: number | undefined, sessionId: string | undefined, callId: string): Pending | undefined {
    if (serial !== undefined) {
      const held = this.pending.get(serial)
      if (held) {
        this.pending.delete(serial)
        return held
      }
      if (!this.loose) return undefined
    }
    const key = keyOf(sessionId, callId)
    const held = this.pending.get(key)
    if (held) {
      this.pending.delete(key)
      this.loose--
      return held
    }
    if (serial !== undefined) return undefined
    // A host's own `CallInfo` for a call the pipeline's requests named by serial.
    for (const [key, held] of this.pending) {
      if (held.callId === callId && held.sessionId === sessionId) {
        this.pending.delete(key)
        if (typeof key === 'string') this.loose--
        return held
      }
    }
    return undefined
  }
}

/** How a call is known: the pipeline's serial, else its session and model id. */
export function callKeyOf(serial: number | undefined, sessionId: string | undefined, callId: string): CallKey {
  return serial !== undefined ? serial : keyOf(sessionId, callId)
}

function keyOf(sessionId: string | undefined, callId: string): string {
  return `${sessionId ?? ''}\u0000${callId}`
}

/**
 * The sources that end an ask: each is an `AuditAskEnd` of the same name, and a source kind
 * added to `DecisionSource` without one fails to compile here.
 */
type AskEndingKind = Exclude<DecisionSource['kind'], 'rule' | 'grant' | 'mode' | 'default' | 'middleware' | 'quota'>
const ASK_ENDS_AGREE: [AskEndingKind] extends [AuditAskEnd] ? true : never = true
void ASK_ENDS_AGREE

/** What an ask's decision event says of who was asked and how it ended. */
export function askOf(event: DecisionEvent): AuditAsk {
  const source = event.source
  const ask: AuditAsk = {
    // Called for the sources that do not decide (`decides`): each is an ask's end.
    ended: source.kind as AskEndingKind,
    decision: event.decision === 'allow' ? 'allow' : 'deny',
  }
  if (event.requestId !== undefined) ask.requestId = event.requestId
  if (event.approvers !== undefined) ask.approvers = event.approvers
  if (source.kind === 'answer') {
    ask.by = source.by
    ask.scope = source.scope
    if (source.via !== undefined) ask.via = source.via
    if (source.grant) ask.grantId = source.grant.id
    if (source.edited) ask.edited = true
  } else if (source.kind === 'elsewhere') {
    const where: NonNullable<AuditAsk['elsewhere']> = {}
    if (typeof source.instance === 'string') where.instance = source.instance
    if (typeof source.by === 'string') where.by = source.by
    ask.elsewhere = where
  }
  return ask
}
