import type { ActiveCall } from '../active-call'
import type { ToolResult } from '../tool-result'

/** A value now, or a promise of it later: a stage that can answer at once never makes a promise. */
export type Step<T> = T | Promise<T>

/**
 * One policy point of the call pipeline (docs/pipeline.md). A stage passes the call on
 * (`undefined`) or ends it with a result, now or later: the runner awaits only promises, so a
 * call every stage lets through at once reaches its handler without a promise hop. A stage
 * may change the call (its arguments, its permission, what it holds), never its result after
 * it ends. A promise it returns never rejects: every failure is a result the model can read.
 */
export interface Stage {
  enter(call: ActiveCall): Step<ToolResult | undefined>
}

export function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return !!value && typeof (value as Promise<T>).then === 'function'
}
