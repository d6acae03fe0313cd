import type { ActiveCall } from '../active-call'
import { messageOf } from '../error-message'
import type { QuotaOutcome, QuotaRefusal } from '../quotas/quota-book'
import type { ToolResult } from '../tool-result'
import { abortedResult, codedResult } from './call-results'
import type { PipelineShared } from './pipeline-host'
import { reportDecision } from './report-decision'
import { isPromise, type Stage, type Step } from './stage'

/**
 * Limits: a unit of every quota on the call (`quotas`), then a place under each running cap
 * on its session (`maxRunning`). Ends the call `rate_limited` when a quota is used up, with
 * an error when a count cannot be read (fail closed); a call that waits for a place keeps its
 * timeout, past which it ends `timed_out` without having run. Neither configured: nothing.
 */
export class LimitsStage implements Stage {
  constructor(private shared: PipelineShared) {}

  enter(call: ActiveCall): Step<ToolResult | undefined> {
    if (!call.quotaTaken) {
      const refused = this.takeQuota(call)
      if (refused) return isPromise(refused) ? refused.then((result) => result ?? (call.aborted ? undefined : this.place(call))) : refused
    }
    return this.place(call)
  }

  /**
   * Takes a unit of every quota on the call (`call.reservation`), once: the authorize stage
   * takes them before it asks a person. A final result when the call may not run.
   */
  takeQuota(call: ActiveCall): Step<ToolResult | undefined> {
    const quotas = this.shared.host.quotas
    // The toolset's own `tool_search` is a lookup no quota counts.
    if (!quotas.active || call.entry.uncounted) return undefined
    call.quotaTaken = true
    let outcome: QuotaOutcome | Promise<QuotaOutcome>
    try {
      outcome = quotas.reserve(call.name, call.session)
    } catch (error) {
      return this.quotaFailed(call, error)
    }
    if (!isPromise(outcome)) return this.reserved(call, outcome)
    call.waited = true
    return outcome.then((settled) => this.reserved(call, settled), (error) => this.quotaFailed(call, error))
  }

  private reserved(call: ActiveCall, outcome: QuotaOutcome): ToolResult | undefined {
    if (!outcome) return undefined
    if ('refused' in outcome) return this.rateLimited(call, outcome)
    // Cancelled while a database counted: the unit goes back at once.
    if (call.aborted) {
      this.shared.host.quotas.release(outcome)
      return abortedResult(call)
    }
    call.reservation = outcome
    return undefined
  }

  /** A quota is used up: the call does not run, and the refusal is a decision like the gate's. */
  private rateLimited(call: ActiveCall, refusal: QuotaRefusal): ToolResult {
    call.span?.decided('deny', 'quota')
    reportDecision(this.shared.host, call, refusal.message, { kind: 'quota', name: refusal.name })
    const result = codedResult(call, 'rate_limited', 'rate_limited', refusal.params)
    if (refusal.retryAfterMs !== undefined) result.retryAfterMs = refusal.retryAfterMs
    return result
  }

  private quotaFailed(call: ActiveCall, error: unknown): ToolResult {
    this.shared.host.logger.warn('the quota count of %s (%s) failed, so it did not run: %s', call.name, call.id, messageOf(error))
    return codedResult(call, 'error', 'quota_unavailable', { error: messageOf(error) })
  }

  /** `maxRunning`: a place under each cap on the call's session, held until the call settles. */
  private place(call: ActiveCall): Step<ToolResult | undefined> {
    const caps = this.shared.host.caps
    if (!caps.active) return undefined
    const held = caps.tryAcquire(call.session)
    if (held) {
      call.holdPlaces(caps, held)
      return undefined
    }
    // Only a call that waits needs its signal (an AbortController costs more than the rest).
    call.waited = true
    this.waitClock(call, () => caps.describe(call.session))
    return caps.wait(call.session, call.signal).then(
      // Aborted as the places came: the runner ends it, and the end gives them back.
      (places) => { call.holdPlaces(caps, places); return undefined },
      () => abortedResult(call),
    )
  }

  /** Bounds a call's wait to start by its timeout. */
  private waitClock(call: ActiveCall, why: () => string) {
    const timeout = Math.min(call.tool.traits.timeout, this.shared.limits.timeout)
    if (call.waitTimer || !(timeout < 2 ** 31)) return
    call.waitTimer = setTimeout(() => call.abort('timed_out', { cause: 'queue_timeout', timeoutMs: timeout, caps: why() }), timeout)
  }
}
