import type { CallInfo, DecisionEvent, ToolResult } from '@dogu/core'

/** One line of the console's live log. */
export type LogEntry =
  | { seq: number; at: number; kind: 'call-start'; callId: string; tool: string; sessionId: string; args: unknown }
  | { seq: number; at: number; kind: 'call-progress'; callId: string; tool: string; sessionId: string; message: string }
  | { seq: number; at: number; kind: 'call-end'; callId: string; tool: string; sessionId: string; status: ToolResult['status']; durationMs: number; retryAfterMs?: number }
  | { seq: number; at: number; kind: 'decision'; phase: DecisionEvent['phase']; decision: DecisionEvent['decision']; tool: string; sessionId: string; reason?: string; source: string }

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
