import type { ActiveCall } from '../active-call'
import { truncateContent } from '../normalize-output'
import type { RepairRecord } from '../repair/repair-step'
import { telemetry } from '../telemetry/call-telemetry'
import type { ToolEntry } from '../tool-entry'
import { enUS } from '../messages/en-us'
import type { ResultParamsByCode } from '../result-params'
import type { ToolResult } from '../tool-result'
import { abortedResult, makeResult } from './call-results'
import type { PipelineShared } from './pipeline-host'

/**
 * Where every call ends, once: what it holds given back, its result redacted and cut, then
 * its span and `tools/call-end` (which the audit log and the hosts listen to), then the reply.
 * Not a pass-or-end stage: the end of every path through them.
 */
export class SettleStage {
  constructor(private shared: PipelineShared) {}

  /** A call that ends before its handler ran (a stage ended it): what it took to start goes back. */
  end(call: ActiveCall, made: ToolResult): void {
    const result = this.finalized(made)
    call.settled = true
    if (call.waitTimer) clearTimeout(call.waitTimer)
    call.releaseSlot()
    if (call.reservation) this.unreserve(call)
    // A call handed to the background before its stages (one resumed after a restart) was
    // reported then; its end, even a refusal, is its task's.
    if (!call.adopted) this.report(call, result)
    call.sink!(result)
  }

  /** `end` for a call whose signal aborted before it ran. */
  endAborted(call: ActiveCall): void {
    this.end(call, abortedResult(call))
  }

  /** A call whose handler ran (or was running) ends: its places and, if the tool never started, its quota units go back. */
  settle(call: ActiveCall, made: ToolResult): void {
    call.settled = true
    call.releaseSlot()
    if (call.reservation && !call.toolStarted) this.unreserve(call)
    this.shared.host.running.done()
    const result = this.finalized(made)
    // An adopted call already told the model it moved to the background; its end belongs
    // to the background service, not to `tools/call-end`.
    if (!call.adopted) this.report(call, result)
    call.sink!(result)
  }

  /** A call that never became one: unknown tool or bad arguments (perhaps after a repair); `content` is the en-US message of `params`. */
  reject<C extends 'unknown_tool' | 'invalid_arguments'>(id: string, name: unknown, code: C, params: ResultParamsByCode[C], entry?: ToolEntry, repaired?: RepairRecord): ToolResult {
    const label = typeof name === 'string' ? name : String(name)
    const made = makeResult(id, label, 'error', (enUS.results[code] as (params: ResultParamsByCode[C]) => string)(params), 0, code)
    made.params = params
    if (repaired) made.repaired = repaired
    const result = this.finalized(made)
    // A call to a known tool with bad arguments is still a call its traces should show.
    if (entry && telemetry) telemetry.start({ id, name: label, tool: entry.tool })?.end(result)
    const emit = this.shared.host.emit
    if (emit) {
      const info = { id, name: label, session: this.shared.session, args: undefined, startedAt: Date.now() }
      emit('tools/call-start', info)
      emit('tools/call-end', info, result)
    }
    return result
  }

  /**
   * The result as it leaves the pipeline: `redact`'s secrets replaced, then the content cut
   * to `maxContentLength` (in that order: a secret the cut split would leave its start behind).
   */
  finalized(result: ToolResult): ToolResult {
    const redactor = this.shared.host.redactor
    if (redactor.active) result = redactor.result(result)
    result.content = truncateContent(result.content, this.shared.limits.maxContentLength)
    return result
  }

  /** The call ended: its span, then `tools/call-end`. */
  report(call: ActiveCall, result: ToolResult): void {
    call.span?.end(result)
    this.shared.host.emit?.('tools/call-end', call, result)
  }

  /** A late outcome of a call that already ended, logged and dropped. */
  dropLate(call: ActiveCall, kind: string): void {
    this.shared.host.logger.debug('discarded the late %s of %s (%s) after it ended %s', kind, call.name, call.id, call.abortKind ?? 'already')
  }

  /** Gives back the quota units of a call that ended without its tool running. */
  private unreserve(call: ActiveCall) {
    const reservation = call.reservation!
    call.reservation = undefined
    this.shared.host.quotas.release(reservation)
  }
}
