import type { ActiveCall } from '../active-call'
import type { BackgroundPort } from '../background-port'
import type { ToolResult } from '../tool-result'
import { abortReason } from '../messages/en-us'
import type { AbortCause } from '../result-params'
import { codedResult } from './call-results'
import { errorResult, outputResult } from './handler-result'
import type { MiddlewareStage } from './middleware-stage'
import type { PipelineShared } from './pipeline-host'
import type { SettleStage } from './settle-stage'
import { runTool } from './run-tool'
import type { Stage } from './stage'

/**
 * Run: the last stage, which keeps the call until it settles. Starts the call's deadline
 * (the lower of the tool's timeout and the host's), then the handler, through the
 * middlewares that match it (the middleware stage). Past the deadline a tool with
 * `background` is adopted by the background service, any other ends `timed_out`.
 */
export class RunStage implements Stage {
  constructor(private shared: PipelineShared, private middleware: MiddlewareStage, private settle: SettleStage) {}

  enter(call: ActiveCall): ToolResult | undefined {
    if (call.waitTimer) clearTimeout(call.waitTimer)
    if (call.entry.disposed) {
      call.releaseSlot()
      return codedResult(call, 'cancelled', 'cancelled', { cause: 'unloaded', tool: call.name })
    }
    const { host, limits } = this.shared
    // A call that reached its handler without waiting (the common case) starts its clock
    // at `startedAt`, which saves a clock read; one that waited starts it now.
    call.runAt = call.waited ? Date.now() : call.startedAt
    // Handed over at start (MCP task mode): its deadline is now, so the timer adopts it at once.
    call.at = call.runAt + (limits.backgroundAtStart && call.tool.traits.background ? 0 : Math.min(call.tool.traits.timeout, limits.timeout))
    call.waitBeforeRun = call.waitMs
    host.running.add(call)
    if (this.middleware.wrap(call)) return undefined
    let output: unknown
    try {
      output = runTool(call)
    } catch (error) {
      this.settleError(call, error)
      return undefined
    }
    if (output && typeof (output as Promise<unknown>).then === 'function') {
      ;(output as Promise<unknown>).then((value) => this.settleOutput(call, value), (error) => this.settleError(call, error))
    } else {
      this.settleOutput(call, output)
    }
    return undefined
  }

  /** The deadline passed while the handler was running. */
  expired(call: ActiveCall): void {
    if (call.settled || call.aborted) return
    // Adopted past its deadline, a call runs on. One handed over before it ran (resumed after a
    // restart) keeps its tool's timeout, unless the tool may run in the background.
    if (call.adopted && (!call.resumes || call.tool.traits.background)) return
    const background = this.shared.host.background
    if (call.tool.traits.background && background) {
      try {
        this.adopt(call, background)
        return
      } catch (error) {
        this.shared.host.logger.warn('background service refused %s: %s', call.name, error)
      }
    }
    call.abort('timed_out', { cause: 'timeout', timeoutMs: Math.min(call.tool.traits.timeout, this.shared.limits.timeout) })
  }

  private settleOutput(call: ActiveCall, output: unknown) {
    if (call.settled) return this.settle.dropLate(call, 'result')
    this.settle.settle(call, outputResult(call, output))
  }

  private settleError(call: ActiveCall, error: unknown) {
    if (call.settled) return this.settle.dropLate(call, 'error')
    this.settle.settle(call, errorResult(call, error, this.shared.host.logger))
  }

  /** The model is answered now (`background`, with the task's id); the call's end goes to the task. */
  private adopt(call: ActiveCall, background: BackgroundPort) {
    const reply = call.sink!
    reply(this.handOver(call, background))
  }

  /**
   * Hands the call to `background` as a task of its session: its end goes to the task from
   * now on, and the `background` result (naming the task; `resumed`: approved after a restart) is reported
   * (`tools/call-end`) and returned. Throws, leaving the call as it was, when the service refuses.
   */
  handOver(call: ActiveCall, background: BackgroundPort, resumed?: true): ToolResult {
    const before = call.sink
    const later = new Promise<ToolResult>((resolve) => { call.sink = resolve })
    call.adopted = true
    let task: { id: string }
    try {
      task = background.adopt({
        callId: call.id,
        tool: call.name,
        session: call.session,
        args: call.args,
        startedAt: call.startedAt,
        result: later,
        cancel: (reason) => call.abort('cancelled', taskCancel(reason)),
      })
    } catch (error) {
      call.adopted = false
      call.sink = before
      throw error
    }
    const result = codedResult(call, 'background', 'background', resumed ? { taskId: task.id, resumed } : { taskId: task.id })
    result.taskId = task.id
    this.settle.report(call, result)
    return result
  }
}

/** The known reasons a background task is cancelled for, structured; any other is told as given. */
const TASK_CANCELS: readonly AbortCause[] = [{ cause: 'task' }, { cause: 'task', by: 'model' }, { cause: 'task', by: 'service_stopped' }]

function taskCancel(reason: string | undefined): AbortCause {
  if (reason === undefined) return TASK_CANCELS[0]!
  return TASK_CANCELS.find((cause) => abortReason(cause) === reason) ?? { cause: 'task', reason }
}
