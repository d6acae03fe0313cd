import type { ActiveCall } from '../active-call'
import type { ToolResult } from '../tool-result'
import { abortedResult } from './call-results'
import type { Stage, Step } from './stage'

/**
 * Schedule: a slot under the tool's own `concurrency` cap, if it has one; the call waits
 * for it. The slot is released when the handler settles, not when the model is answered:
 * an adopted call still occupies it while it runs in the background. (The batch gate of
 * `traits.parallel` is `Toolset.execute`'s: it orders whole calls, authorization included.)
 */
export class ScheduleStage implements Stage {
  enter(call: ActiveCall): Step<ToolResult | undefined> {
    const limit = call.entry.limit
    if (!limit) return undefined
    let waiting: Promise<void> | undefined
    try {
      waiting = limit.acquire(call.signal)
    } catch {
      return abortedResult(call)
    }
    if (!waiting) {
      call.release = () => limit.release()
      return undefined
    }
    call.waited = true
    return waiting.then(
      () => { call.release = () => limit.release(); return undefined },
      () => abortedResult(call),
    )
  }
}
