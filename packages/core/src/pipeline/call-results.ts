import { ABORT_STATUS, type ActiveCall } from '../active-call'
import { editNote } from '../argument-editor'
import type { RepairRecord } from '../repair/repair-step'
import type { ToolResult, ToolResultCode, ToolStatus } from '../tool-result'

/** A bare result: the call's identity, what it ended with and how long it took. */
export function makeResult(id: string, name: string, status: ToolStatus, content: string, durationMs: number, code?: ToolResultCode): ToolResult {
  const result: ToolResult = { id, name, status, content, durationMs }
  if (code) result.code = code
  return result
}

/** A result for a call that was prepared: its run time, and the time it waited for a person if it did. */
export function callResult(call: ActiveCall, status: ToolStatus, content: string, code?: ToolResultCode): ToolResult {
  // The model is told a person changed its call, so it does not take the result for its own call's.
  if (call.edits && status !== 'denied') content = `${editNote(call.edits)}\n\n${content}`
  // And that its arguments were repaired, so it sends strict JSON next time.
  if (call.repaired) content = `${repairNote(call.repaired)}\n\n${content}`
  const result = makeResult(call.id, call.name, status, content, call.durationMs(), code)
  if (call.waitMs !== undefined) result.waitMs = call.waitMs
  if (call.repaired) result.repaired = call.repaired
  return result
}

/** `Permission denied: <reason>`, the one form every denial of a prepared call takes. */
export function deniedResult(call: ActiveCall, reason: string): ToolResult {
  return callResult(call, 'denied', `Permission denied: ${reason}`, 'permission_denied')
}

/** A call whose signal aborted: `cancelled` or `timed_out`, with its last progress line. */
export function abortedResult(call: ActiveCall): ToolResult {
  const status = ABORT_STATUS[call.abortKind!]
  const label = status === 'timed_out' ? 'Timed out' : 'Cancelled'
  let content = `${label}: ${call.abortMessage}.`
  if (call.lastProgress) content += ` Last progress: ${call.lastProgress}`
  return callResult(call, status, content, status as ToolResultCode)
}

/** The line a model reads first when its arguments were repaired. */
function repairNote(repaired: RepairRecord): string {
  return `Note: your arguments were not valid JSON; they were repaired (${repaired.steps.join(', ')}) before the call ran. Send strict JSON.`
}
