import type { Context, Counter, Histogram, Span, Tracer } from '@opentelemetry/api'
import type { Decision } from '../permission-gate'
import type { ToolResult } from '../tool-result'
import type { CallSpan } from './call-span'
import type { OtelApi } from './otel-api'

/** Dogu's instruments, made once per registered meter provider. */
export interface CallInstruments {
  calls: Counter
  denials: Counter
  asks: Counter
  approvalWait: Histogram
}

/** One call's span (`dogu.tool <name>`) and the metrics it records as it ends. */
export class OtelCallSpan implements CallSpan {
  private asked = false
  private ended = false
  /** Child spans still open: a child started inside one (a middleware's `next`) nests under it. */
  private readonly open = new Set<Span>()
  /** The active context as the call started, with the call's span in it: its children's parent. */
  private readonly context: Context

  constructor(
    private readonly api: OtelApi,
    private readonly tracer: Tracer,
    private readonly span: Span,
    private readonly tool: string,
    private readonly instruments: CallInstruments | undefined,
  ) {
    this.context = api.trace.setSpan(api.context.active(), span)
  }

  decided(decision: Decision, source: string | undefined) {
    this.span.setAttribute('dogu.decision', decision)
    if (source !== undefined) this.span.setAttribute('dogu.decision.source', source)
    // `ask` is decided again ('answer') after a person answered: one ask, counted once.
    if (decision === 'ask' && !this.asked) {
      this.asked = true
      this.instruments?.asks.add(1, { 'dogu.tool.name': this.tool })
    }
  }

  child<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const { api } = this
    // The pipeline's own steps (the approval wait) run outside the call's context: their
    // parent is the call's span, unless they run inside one of its open children.
    const active = api.context.active()
    const inside = api.trace.getSpan(active)
    const parent = inside && this.open.has(inside) ? active : this.context
    const child = this.tracer.startSpan(name, { kind: api.SpanKind.INTERNAL }, parent)
    this.open.add(child)
    return api.context.with(api.trace.setSpan(parent, child), async () => {
      try {
        return await fn()
      } catch (error) {
        child.recordException(error instanceof Error ? error : String(error))
        child.setStatus({ code: api.SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) })
        throw error
      } finally {
        this.open.delete(child)
        child.end()
      }
    })
  }

  run<T>(fn: () => T): T {
    const { api } = this
    return api.context.with(api.trace.setSpan(api.context.active(), this.span), fn)
  }

  end(result: ToolResult) {
    if (this.ended) return
    this.ended = true
    const { span, instruments } = this
    span.setAttribute('dogu.call.status', result.status)
    span.setAttribute('dogu.call.duration_ms', result.durationMs)
    if (result.waitMs !== undefined) span.setAttribute('dogu.approval.wait_ms', result.waitMs)
    if (result.taskId) span.setAttribute('dogu.task.id', result.taskId)
    if (result.status === 'error' || result.status === 'timed_out') {
      span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: result.content.split('\n', 1)[0] })
    }
    span.end()
    if (!instruments) return
    const tool = { 'dogu.tool.name': this.tool }
    instruments.calls.add(1, { ...tool, 'dogu.call.status': result.status })
    if (result.status === 'denied') instruments.denials.add(1, tool)
    if (result.waitMs !== undefined) instruments.approvalWait.record(result.waitMs, tool)
  }
}
