import type { ActiveCall } from '../active-call'
import { checkRevision } from '../argument-editor'
import { messageOf } from '../error-message'
import { type ChainHost, ChainRun } from '../middleware/middleware-chain'
import type { RegisteredMiddleware } from '../middleware/middleware-stack'
import type { PermissionSpec } from '../tool'
import { ToolDenial } from '../tool-denial'
import { TOOL_STATUSES, type ToolResult } from '../tool-result'
import { middlewareFailureText } from '../messages/en-us'
import type { MiddlewareFailure } from '../result-params'
import { abortedResult, codedResult, deniedResult, makeResult } from './call-results'
import { errorResult, outputResult } from './handler-result'
import type { PipelineShared } from './pipeline-host'
import { reauthorize } from './reauthorize'
import { reportDecision } from './report-decision'
import { runTool } from './run-tool'
import type { SettleStage } from './settle-stage'

/** What a middleware may end a call with: every status but `background` (only the pipeline adopts). */
const MIDDLEWARE_STATUSES: ReadonlySet<unknown> = new Set(TOOL_STATUSES.filter((status) => status !== 'background'))

/**
 * Middleware (`ctx.tools.use`): the middlewares that match the tool, around its handler,
 * under the call's deadline. A middleware may pass the call on (`next()`), rewrite its
 * arguments (validated, and authorized again when its permission changes), deny it, or
 * replace or transform its result. No middleware on the tool: nothing runs here.
 */
export class MiddlewareStage implements ChainHost {
  constructor(private shared: PipelineShared, private settle: SettleStage) {}

  /** Starts the call's chain, when any middleware matches its tool; `false` when none does. */
  wrap(call: ActiveCall): boolean {
    const chain = this.shared.host.middleware.chainFor(call.entry)
    if (!chain) return false
    new ChainRun(this, call, chain).start()
    return true
  }

  handler(call: ActiveCall): ToolResult | Promise<ToolResult> {
    let output: unknown
    try {
      output = runTool(call)
    } catch (error) {
      return call.passed = errorResult(call, error, this.shared.host.logger)
    }
    if (output && typeof (output as Promise<unknown>).then === 'function') {
      return call.handled = (output as Promise<unknown>).then((value) => this.passOn(call, outputResult(call, value)), (error) => this.passOn(call, errorResult(call, error, this.shared.host.logger)))
    }
    return call.passed = outputResult(call, output)
  }

  /** The tool's result, handed to the chain; straight to its end when every middleware passed the handler's promise on. */
  private passOn(call: ActiveCall, result: ToolResult): ToolResult {
    call.passed = result
    const run = call.chainRun
    if (run) {
      call.chainRun = undefined
      run.ended(result)
    }
    return result
  }

  chainEnded(call: ActiveCall, result: ToolResult): void {
    if (call.settled) return this.settle.dropLate(call, 'result')
    this.settle.settle(call, result)
  }

  traced(call: ActiveCall, by: RegisteredMiddleware, fn: () => ToolResult | Promise<ToolResult>): ToolResult | Promise<ToolResult> {
    return call.span ? call.span.child(`dogu.middleware ${by.name}`, async () => fn()) : fn()
  }

  rewrite(call: ActiveCall, args: unknown, by: RegisteredMiddleware): ToolResult | undefined | Promise<ToolResult | undefined> {
    const checked = checkRevision(call, args, this.shared.limits.maxArgumentsLength)
    if ('refusal' in checked) return this.failed(call, by, { kind: 'rewrite', refusal: checked.refusal })
    // The same arguments in a new object are no rewrite.
    if (checked.json === JSON.stringify(call.args)) return undefined
    const before = call.permission
    call.rewrite(checked.input, checked.args, checked.permission)
    // Under the permission it was authorized for, the rewritten call needs no new decision.
    if (before && samePermission(before, checked.permission)) return undefined
    return reauthorize(this.shared.host, call, by, checked.permission)
  }

  resultOf(call: ActiveCall, value: unknown, by: RegisteredMiddleware): ToolResult {
    // The result `next` resolved with (the inner middlewares', or the tool's), passed on.
    if (value === call.passed && value) return value as ToolResult
    return call.passed = this.madeOf(call, value, by)
  }

  failure(call: ActiveCall, error: unknown, by: RegisteredMiddleware): ToolResult {
    if (error instanceof ToolDenial) return call.passed = this.denied(call, by, error.reason)
    if (call.aborted) return call.passed = abortedResult(call)
    return call.passed = this.failed(call, by, { kind: 'threw', message: messageOf(error) })
  }

  private madeOf(call: ActiveCall, value: unknown, by: RegisteredMiddleware): ToolResult {
    if (!value || typeof value !== 'object') return this.failed(call, by, value === undefined ? { kind: 'no_result' } : { kind: 'no_result', got: String(JSON.stringify(value)) })
    const returned = value as Partial<ToolResult> & { reason?: unknown }
    if (returned.status === 'denied' && typeof returned.reason === 'string') return this.denied(call, by, returned.reason)
    if (!MIDDLEWARE_STATUSES.has(returned.status)) return this.failed(call, by, { kind: 'bad_status', status: String(JSON.stringify(returned.status)) })
    if (typeof returned.content !== 'string') return this.failed(call, by, { kind: 'no_content' })
    // A replaced or transformed result: the call's identity and clock, the middleware's content.
    const result = makeResult(call.id, call.name, returned.status!, returned.content, call.durationMs(), returned.code)
    if (returned.images) result.images = returned.images
    if (returned.audio) result.audio = returned.audio
    if (returned.resources) result.resources = returned.resources
    if (returned.data !== undefined) result.data = returned.data
    if (returned.artifacts) result.artifacts = returned.artifacts
    if (returned.status === 'rate_limited' && typeof returned.retryAfterMs === 'number') result.retryAfterMs = returned.retryAfterMs
    if (call.waitMs !== undefined) result.waitMs = call.waitMs
    return result
  }

  /** A middleware blocked the call: a decision like the gate's, reported as one. */
  private denied(call: ActiveCall, by: RegisteredMiddleware, reason: string): ToolResult {
    call.span?.decided('deny', 'middleware')
    reportDecision(this.shared.host, call, reason, { kind: 'middleware', name: by.name })
    return deniedResult(call, { cause: 'middleware', by: by.name, reason })
  }

  /** A middleware failed: an error result naming it. */
  private failed(call: ActiveCall, by: RegisteredMiddleware, failure: MiddlewareFailure): ToolResult {
    this.shared.host.logger.warn('%s failed on %s (%s): %s', by.label, call.name, call.id, middlewareFailureText(failure))
    return codedResult(call, 'error', 'middleware_error', { middleware: by.name, ...(by.plugin ? { plugin: by.plugin } : {}), failure })
  }
}

/** Whether a rewrite keeps the call under the permission it was authorized for: same name, target and effect. */
function samePermission(a: PermissionSpec, b: PermissionSpec): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b)
}
