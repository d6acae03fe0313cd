import { ABORT_STATUS, type ActiveCall } from '../active-call'
import { enUS } from '../messages/en-us'
import type { ResultParamsByCode } from '../result-params'
import type { ToolResult, ToolResultCode, ToolStatus } from '../tool-result'
import type { Denial } from '../types/denial'

/** A bare result: the call's identity, what it ended with and how long it took. */
export function makeResult(id: string, name: string, status: ToolStatus, content: string, durationMs: number, code?: ToolResultCode): ToolResult {
  const result: ToolResult = { id, name, status, content, durationMs }
  if (code) result.code = code
  return result
}

/**
 * The result of a call refused or cut off for `code`, with its parameters: `content` is the
 * en-US catalogue's message of them (the model's English), and a host renders the same
 * parameters in a person's locale.
 */
export function codedResult<C extends ToolResultCode>(call: ActiveCall, status: ToolStatus, code: C, params: ResultParamsByCode[C]): ToolResult {
  const result = callResult(call, status, (enUS.results[code] as (params: ResultParamsByCode[C]) => string)(params), code)
  result.params = params
  return result
}

/** A result for a call that was prepared: its run time, and the time it waited for a person if it did. */
export function callResult(call: ActiveCall, status: ToolStatus, content: string, code?: ToolResultCode): ToolResult {
  // The model is told a person changed its call, so it does not take the result for its own call's.
  if (call.edits && status !== 'denied') content = `${enUS.edited(call.edits)}\n\n${content}`
  // And that its arguments were repaired, so it sends strict JSON next time.
  if (call.repaired) content = `${enUS.repaired(call.repaired.steps)}\n\n${content}`
  const result = makeResult(call.id, call.name, status, content, call.durationMs(), code)
  if (call.waitMs !== undefined) result.waitMs = call.waitMs
  if (call.repaired) result.repaired = call.repaired
  if (call.edits) result.edits = call.edits
  return result
}

/** `Permission denied: <reason>`, the one form every denial of a prepared call takes. */
export function deniedResult(call: ActiveCall, denial: Denial): ToolResult {
  return codedResult(call, 'denied', 'permission_denied', denial)
}

/** A call whose signal aborted: `cancelled` or `timed_out`, with its last progress line. */
export function abortedResult(call: ActiveCall): ToolResult {
  const status = ABORT_STATUS[call.abortKind!] as 'timed_out' | 'cancelled'
  const cause = call.abortCause ?? { cause: 'other', reason: call.abortMessage ?? 'the call was aborted' }
  return codedResult(call, status, status, call.lastProgress ? { ...cause, lastProgress: call.lastProgress } : cause)
}
