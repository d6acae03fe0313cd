import { LOG_LEVELS, type LogLevel, type ToolResult } from '@dogu/core'

/**
 * The level a connection sends from until its client sets one with `logging/setLevel`:
 * a tool's `call.log` at `info` and above. The specification leaves the unset case to the
 * server; `debug` lines are noise a client did not ask for, and Dogu's own call events go
 * only to a client that set a level.
 */
export const DEFAULT_LOG_LEVEL: LogLevel = 'info'

/** The logger name of Dogu's own call events in `notifications/message` (a tool's lines carry the tool's name). */
export const CALL_EVENTS_LOGGER = 'dogu'

const SEVERITY = new Map(LOG_LEVELS.map((level, i) => [level, i]))

/** Whether a line at `level` goes to a client that set `threshold`. */
export function isLogged(level: LogLevel, threshold: LogLevel): boolean {
  return (SEVERITY.get(level) ?? 0) >= (SEVERITY.get(threshold) ?? 0)
}

/** What a call event says in `notifications/message`: a line a person reads, and the fields a program reads. */
export interface CallEventData {
  message: string
  event: 'call-start' | 'call-end'
  tool: string
  callId: string
  status?: ToolResult['status']
  code?: ToolResult['code']
  durationMs?: number
}

/** A call began: `debug`. */
export function callStartEvent(tool: string, callId: string): { level: LogLevel; data: CallEventData } {
  return { level: 'debug', data: { message: `${tool}: started`, event: 'call-start', tool, callId } }
}

/** The statuses a call ends with that did not go as asked (failed, refused, too slow, over a quota). */
const WARNED: ReadonlySet<ToolResult['status']> = new Set<ToolResult['status']>(['error', 'denied', 'timed_out', 'rate_limited'])

/** A call ended: `warning` when it failed or was refused, else `info` (done, moved to the background, cancelled by the client). */
export function callEndEvent(result: ToolResult): { level: LogLevel; data: CallEventData } {
  const level: LogLevel = WARNED.has(result.status) ? 'warning' : 'info'
  const data: CallEventData = {
    message: `${result.name}: ${result.status}${result.code ? ` (${result.code})` : ''} in ${Math.round(result.durationMs)} ms`,
    event: 'call-end',
    tool: result.name,
    callId: result.id,
    status: result.status,
    durationMs: result.durationMs,
  }
  if (result.code) data.code = result.code
  return { level, data }
}
