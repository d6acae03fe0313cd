import type { Decision } from '../types/decision'
import type { Tool } from '../tool'
import type { ToolResult } from '../tool-result'

// What the pipeline tells telemetry, apart from the OpenTelemetry object that implements it
// (call-telemetry.ts builds that one), so the implementation imports no file that imports it.

/** What the pipeline tells telemetry about one call. */
export interface CallSpan {
  /** The permission decision, and the kind of source that made it (rule, grant, mode, default, answer, middleware, …); a later call overrides. */
  decided(decision: Decision, source: string | undefined): void
  /** Runs `fn` in a child span `name` (approval wait, a middleware), as the active context. */
  child<T>(name: string, fn: () => Promise<T>): Promise<T>
  /** Runs `fn` with the call's span as the active context (the tool's `run`). */
  run<T>(fn: () => T): T
  /** The call ended with `result`: attributes, status, metrics; ends the span. A second call is ignored. */
  end(result: ToolResult): void
}

export interface CallTelemetry {
  /** A call was prepared; `undefined` when neither a tracer nor a meter provider is registered. */
  start(call: { id: string; name: string; tool: Tool }): CallSpan | undefined
}
