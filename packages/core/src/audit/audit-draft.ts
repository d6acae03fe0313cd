import type { DecisionSource } from '../permissions/permission-decision'
import type { Session } from '../session'
import type { ToolResult, ToolResultCode, ToolStatus } from '../tool-result'
import type { AuditAsk, AuditRecord, AuditResumes } from './audit-record'

/** A record a host assembled itself (`AuditLog.record()`): only its id and arguments are finished. */
export type PresetRecord = Omit<AuditRecord, 'id' | 'argsHash'> & { id?: string }

/**
 * A record as the log queues it, finished (id, caller, hash) in the batch, off the call's
 * path. Every field is set in the constructor and again by `reset`, so every draft has one
 * shape and the call path's stores into it stay monomorphic. Drafts are reused once written
 * (`DraftPool`): a queued record costs the call no allocation.
 */
export class Draft {
  at = 0
  /**
   * `endedAt - at`: a small integer held inline, where a second timestamp would be one more
   * boxed number per queued record. A coalesced draft's grows to its last call's end.
   */
  elapsed = 0
  tool = ''
  callId = ''
  args: unknown = undefined
  session: Session | undefined = undefined
  outcome: ToolStatus = 'ok'
  durationMs = 0
  decided: DecisionSource | undefined = undefined
  ask: AuditAsk | undefined = undefined
  code: ToolResultCode | undefined = undefined
  reason: string | undefined = undefined
  taskId: string | undefined = undefined
  waitMs: number | undefined = undefined
  repaired: ToolResult['repaired'] = undefined
  resumes: AuditResumes | undefined = undefined
  preset: PresetRecord | undefined = undefined
  /** Set once finished: a write that failed keeps it for the next. */
  record: AuditRecord | undefined = undefined
  /** The arguments' JSON when finishing made it (the file store writes it as is). */
  argsJson: string | undefined = undefined
  /** The call ended before its authorization (`AuditRecord.early`). */
  early = false
  /** The calls an early draft stands for (`AuditRecord.count`). */
  count = 1

  /** Sets what every draft has; the optional fields are cleared. */
  fill(at: number, elapsed: number, tool: string, callId: string, args: unknown, session: Session | undefined, outcome: ToolStatus, durationMs: number): this {
    this.at = at
    this.elapsed = elapsed
    this.tool = tool
    this.callId = callId
    this.args = args
    this.session = session
    this.outcome = outcome
    this.durationMs = durationMs
    return this
  }

  /** Forgets the call, so a pooled draft holds no arguments or session alive. */
  reset(): void {
    this.args = this.session = this.decided = this.ask = this.code = this.reason = this.taskId = this.waitMs = this.repaired = this.resumes = this.preset = this.record = this.argsJson = undefined
    this.tool = this.callId = ''
    this.early = false
    this.count = 1
  }
}

/** Written drafts kept for reuse, at most `size` of them. */
export class DraftPool {
  private free: Draft[] = []

  constructor(private readonly size: number) {}

  take(): Draft {
    return this.free.pop() ?? new Draft()
  }

  /** Gives back drafts whose records were written (not those a failed write keeps). */
  give(drafts: readonly Draft[]): void {
    for (let i = 0; i < drafts.length && this.free.length < this.size; i++) {
      drafts[i].reset()
      this.free.push(drafts[i])
    }
  }
}

/** A draft of a call that nobody authorized: the first to go when the queue must shrink. */
export function isEarlyDraft(draft: Draft): boolean {
  return draft.early || draft.preset?.early === true
}

/**
 * What early drafts coalesce by: the session and the code, and the tool but for unknown
 * tools (whose names the model makes up, one per call if it likes).
 */
export function coalescingKey(draft: Draft): string {
  return `${draft.session?.id ?? ''}\u0000${draft.code ?? ''}\u0000${draft.code === 'unknown_tool' ? '' : draft.tool}`
}
