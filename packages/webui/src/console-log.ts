import type { CallInfo, DecisionEvent, ToolResult } from '@dogu/core'

/** One line of the console's live log. */
export type LogEntry =
  | { seq: number; at: number; kind: 'call-start'; callId: string; tool: string; sessionId: string; args: unknown }
  | { seq: number; at: number; kind: 'call-progress'; callId: string; tool: string; sessionId: string; message: string }
  | { seq: number; at: number; kind: 'call-end'; callId: string; tool: string; sessionId: string; status: ToolResult['status']; durationMs: number; retryAfterMs?: number }
  | { seq: number; at: number; kind: 'decision'; phase: DecisionEvent['phase']; decision: DecisionEvent['decision']; tool: string; sessionId: string; reason?: string; source: string; detail?: DecisionDetail }

/**
 * What decided, as the page words it in its language (the `reason` is the engine's English,
 * as the model and the logs have it): the rule, grant, mode or effect default, who answered
 * and how, how long nobody did, the middleware or quota.
 */
export interface DecisionDetail {
  /** A rule's name (or its id), where it came from, and the permission it names. */
  rule?: { name: string; origin: string; permission: string }
  grant?: string
  mode?: string
  effect?: string
  /** Who answered (`platform:id`) and for how long. */
  answer?: { by: string; scope: string }
  timeoutMs?: number
  /** The middleware or quota that refused the call. */
  name?: string
}

type NewEntry = LogEntry extends infer E ? E extends LogEntry ? Omit<E, 'seq' | 'at'> : never : never

/**
 * The last `size` calls and permission decisions, oldest first. Older entries fall off, so
 * a busy bot never grows the console's memory.
 */
export class ConsoleLog {
  private entries: LogEntry[] = []
  private seq = 0

  constructor(readonly size: number) {}

  callStart(info: CallInfo): void {
    this.push({ kind: 'call-start', callId: info.id, tool: info.name, sessionId: info.session.id, args: info.args })
  }

  callProgress(info: CallInfo, message: string): void {
    this.push({ kind: 'call-progress', callId: info.id, tool: info.name, sessionId: info.session.id, message })
  }

  callEnd(info: CallInfo, result: ToolResult): void {
    this.push({
      kind: 'call-end', callId: info.id, tool: info.name, sessionId: info.session.id, status: result.status, durationMs: result.durationMs,
      ...(result.retryAfterMs !== undefined ? { retryAfterMs: result.retryAfterMs } : {}),
    })
  }

  decision(event: DecisionEvent): void {
    this.push({
      kind: 'decision',
      phase: event.phase,
      decision: event.decision,
      tool: event.request.tool,
      sessionId: event.request.session.id,
      reason: event.reason,
      source: event.source.kind,
      ...(detailOf(event.source) ? { detail: detailOf(event.source) } : {}),
    })
  }

  /** Entries after `since` (a `seq`), oldest first; all kept entries without it. */
  list(since = 0): LogEntry[] {
    return this.entries.filter((entry) => entry.seq > since)
  }

  private push(entry: NewEntry) {
    this.entries.push({ ...entry, seq: ++this.seq, at: Date.now() } as LogEntry)
    if (this.entries.length > this.size) this.entries.splice(0, this.entries.length - this.size)
  }
}

function detailOf(source: DecisionEvent['source']): DecisionDetail | undefined {
  switch (source.kind) {
    case 'rule': return { rule: { name: source.rule.name ?? source.id, origin: source.origin, permission: source.rule.permission } }
    case 'grant': return { grant: source.grant.id }
    case 'mode': return { mode: source.mode }
    case 'default': return { effect: source.effect }
    case 'answer': return { answer: { by: source.by.platform && source.by.platform !== source.by.id ? `${source.by.platform}:${source.by.id}` : source.by.id, scope: source.scope } }
    case 'timeout': return { timeoutMs: source.timeout }
    case 'middleware':
    case 'quota': return { name: source.name }
    default: return undefined
  }
}
