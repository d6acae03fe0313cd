import type { ActiveCall } from '../active-call'
import type { ToolResult } from '../tool-result'
import type { RegisteredMiddleware } from './registered-middleware'

/** What the chain needs of the pipeline. */
export interface ChainHost {
  /** Runs the tool's handler; its result, or a promise of it that never rejects. */
  handler(call: ActiveCall): ToolResult | Promise<ToolResult>
  /**
   * Validates and authorizes arguments `by` passed to `next`, and makes them the call's.
   * Returns a final result when the rewritten call may not run, `undefined` when it may.
   */
  rewrite(call: ActiveCall, args: unknown, by: RegisteredMiddleware): ToolResult | undefined | Promise<ToolResult | undefined>
  /** What `by` returned, made a result: the one it got from `next`, its denial, its replacement, or an error naming it. */
  resultOf(call: ActiveCall, value: unknown, by: RegisteredMiddleware): ToolResult
  /** `by` threw: a denial (`call.deny`) or a `middleware_error`. */
  failure(call: ActiveCall, error: unknown, by: RegisteredMiddleware): ToolResult
  /** Runs `fn` in the middleware's child span, when the call is traced. */
  traced(call: ActiveCall, by: RegisteredMiddleware, fn: () => ToolResult | Promise<ToolResult>): ToolResult | Promise<ToolResult>
  /** The chain's outcome: the call's final result. */
  chainEnded(call: ActiveCall, result: ToolResult): void
}

const twice = () => Promise.reject(new Error('next() was called twice; a call runs once'))

/**
 * One call through its middlewares, outermost first, and the tool at the end. Every step
 * ends in a result: a middleware that throws becomes an error result its outer middlewares
 * still receive from `next`, so their cleanup runs. No `async` here and one object per call:
 * each `async` would add promise hops, and a pass-through middleware is meant to cost a few
 * hundred nanoseconds.
 */
export class ChainRun {
  constructor(
    private readonly host: ChainHost,
    private readonly call: ActiveCall,
    private readonly chain: readonly RegisteredMiddleware[],
  ) {}

  start(): void {
    const outer = this.step(0)
    if (!(outer instanceof Promise)) return this.host.chainEnded(this.call, outer)
    // Every middleware returned `next()` as it was: the handler's own callback ends the
    // chain (`ended`), one promise hop sooner than waiting on its promise here.
    if (outer === this.call.handled) this.call.chainRun = this
    else outer.then((result) => this.host.chainEnded(this.call, result))
  }

  /** The handler's result, when `start` left the end of the chain to it. */
  ended(result: ToolResult): void {
    this.host.chainEnded(this.call, result)
  }

  private step(index: number): ToolResult | Promise<ToolResult> {
    const { call, chain } = this
    if (index === chain.length) return this.host.handler(call)
    const middleware = chain[index]!
    return call.span ? this.host.traced(call, middleware, () => this.around(index, middleware)) : this.around(index, middleware)
  }

  private around(index: number, middleware: RegisteredMiddleware): ToolResult | Promise<ToolResult> {
    const { host, call } = this
    let called = false
    /** What `next` returned: a middleware that returns it as it is passes the inner result on. */
    let forwarded: Promise<ToolResult> | undefined
    const next = (args?: unknown): Promise<ToolResult> => {
      if (called) return twice()
      called = true
      if (args !== undefined && args !== call.args) {
        const stopped = host.rewrite(call, args, middleware)
        if (stopped) return forwarded = Promise.resolve(stopped).then((final) => final ? call.passed = final : this.step(index + 1))
      }
      const inner = this.step(index + 1)
      return forwarded = inner instanceof Promise ? inner : Promise.resolve(inner)
    }
    let value: unknown
    try {
      value = middleware.run(call, next)
    } catch (error) {
      return host.failure(call, error, middleware)
    }
    // `(call, next) => next()`: its promise resolves to a result already made, with no hop more.
    if (forwarded && value === forwarded) return forwarded
    if (value && typeof (value as Promise<unknown>).then === 'function') {
      return (value as Promise<unknown>).then((returned) => host.resultOf(call, returned, middleware), (error) => host.failure(call, error, middleware))
    }
    return host.resultOf(call, value, middleware)
  }
}
