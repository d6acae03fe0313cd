import type { ActiveCall } from '../active-call'
import { messageOf } from '../error-message'
import { ToolDenial } from '../tool-denial'
import type { ToolResult } from '../tool-result'
import type { RegisteredMiddleware } from './middleware-stack'

/** What the chain needs of the pipeline. */
export interface ChainHost {
  /** Runs the tool's handler; resolves to its result, never rejects. */
  handler(call: ActiveCall): Promise<ToolResult>
  /**
   * Validates and authorizes arguments `by` passed to `next`, and makes them the call's.
   * Returns a final result when the rewritten call may not run, `undefined` when it may.
   */
  rewrite(call: ActiveCall, args: unknown, by: RegisteredMiddleware): ToolResult | undefined | Promise<ToolResult | undefined>
  /** What `by` returned, made a result: its denial, its replacement, or an error naming it. */
  resultOf(call: ActiveCall, value: unknown, by: RegisteredMiddleware, passed: ToolResult | undefined): ToolResult
  /** `by` threw: a denial (`call.deny`) or a `middleware_error`. */
  failure(call: ActiveCall, error: unknown, by: RegisteredMiddleware): ToolResult
  /** Runs `fn` in the middleware's child span, when the call is traced. */
  traced(call: ActiveCall, by: RegisteredMiddleware, fn: () => Promise<ToolResult>): Promise<ToolResult>
}

/**
 * Runs `chain` around the call, outermost first, and the tool at its end. Every step
 * resolves to a result: a middleware that throws becomes an error result its outer
 * middlewares still receive from `next`, so their cleanup runs.
 */
export function runChain(host: ChainHost, call: ActiveCall, chain: readonly RegisteredMiddleware[]): Promise<ToolResult> {
  const step = (index: number): Promise<ToolResult> => {
    if (index === chain.length) return host.handler(call)
    const middleware = chain[index]
    return host.traced(call, middleware, () => around(index, middleware))
  }

  const around = async (index: number, middleware: RegisteredMiddleware): Promise<ToolResult> => {
    let passed: ToolResult | undefined
    let called = false
    const next = async (args?: unknown): Promise<ToolResult> => {
      if (called) throw new Error('next() was called twice; a call runs once')
      called = true
      if (args !== undefined && args !== call.args) {
        const stopped = await host.rewrite(call, args, middleware)
        if (stopped) return passed = stopped
      }
      return passed = await step(index + 1)
    }
    let value: unknown
    try {
      value = await middleware.run(call, next)
    } catch (error) {
      return host.failure(call, error, middleware)
    }
    return host.resultOf(call, value, middleware, passed)
  }

  return step(0)
}

/** A middleware's error, as the model reads it. */
export function middlewareError(error: unknown, by: RegisteredMiddleware): string {
  return error instanceof ToolDenial ? `Permission denied: ${error.reason}` : `Error: ${by.label} failed: ${messageOf(error)}`
}
