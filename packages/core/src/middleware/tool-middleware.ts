import type { Tool } from '../tool'
import type { ToolCall } from '../tool-call'
import type { ToolResult } from '../tool-result'

/**
 * What a middleware sees of a call: the `call` a tool's `run` receives, plus the tool and
 * the arguments. `args` are the validated arguments with secret fields shown as `••••`;
 * pass them to `next` changed and the secret fields keep their value.
 */
export interface MiddlewareCall extends ToolCall {
  readonly tool: Tool
  /** The arguments the call runs with so far: a rewrite by an earlier middleware shows here. */
  readonly args: unknown
}

/**
 * Runs the rest of the chain and then the tool. Called without arguments, or with
 * `call.args` itself, the call runs as it is; with other arguments, they are validated
 * against the tool's schema and authorized again (a new permission or target is a new
 * request, which may ask a person or be denied). Resolves to the result, never rejects
 * (an error inside becomes an error result); call it at most once.
 */
export type MiddlewareNext = (args?: unknown) => Promise<ToolResult>

/** What a middleware returns to block a call: the model reads `Permission denied: <reason>`. */
export interface MiddlewareDenial {
  status: 'denied'
  reason: string
}

/**
 * A middleware around every matching call, after validation and authorization (see
 * `ToolRegistry.use`). It may block the call (return `{ status: 'denied', reason }` or call
 * `call.deny(reason)`), rewrite its arguments (`next(newArgs)`), transform or replace the
 * result, and report `call.progress(…)`.
 *
 * @example
 * const capLimit: ToolMiddleware = (call, next) => {
 *   const args = call.args as { limit?: number }
 *   return next(args.limit > 10 ? { ...args, limit: 10 } : args)
 * }
 */
export type ToolMiddleware = (call: MiddlewareCall, next: MiddlewareNext) => ToolResult | MiddlewareDenial | Promise<ToolResult | MiddlewareDenial>

export interface MiddlewareOptions {
  /** Lower runs first (outside); equal orders run in registration order. @default 0 */
  order?: number
  /** Name globs of the tools it wraps (`fs_*`, `['shell', 'http_*']`). @default every tool */
  tools?: string | readonly string[]
  /** Its name in results, logs, spans and the audit log. @default the function's name */
  name?: string
}
