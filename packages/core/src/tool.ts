import type Schema from 'schemastery'
import type { Session } from './session'
import type { Effect, PermissionSpec } from './types/effect'
import type { ToolCall } from './tool-call'
import type { PreviewFunction } from './tool-preview'
import type { ToolOutput } from './tool-result'

// Declared on the floor (types/), where the permission layer reads them too.
export type { Effect, PermissionSpec } from './types/effect'

/**
 * How the scheduler treats a tool. Undeclared means the worst case:
 * `effect: 'exec'`, `parallel: effect === 'read'`, `timeout: 180_000`, `background: true`.
 */
export interface ToolTraits {
  /** May run beside other calls of the same turn. @default effect === 'read' */
  parallel?: boolean
  /** @default 'exec' */
  effect?: Effect
  /** Milliseconds before the call times out (or moves to the background). @default 180_000 */
  timeout?: number
  /** On timeout, hand the running call to `ctx.background` when it is loaded. @default true */
  background?: boolean
  /** At most this many calls of this tool at once, across all sessions. @default Infinity */
  concurrency?: number
}

/**
 * The arguments a handler (`run`, `permission`, `preview`) receives: `A`, once known. Given
 * `args`, the schema decides `A`, and an annotation on a handler is checked against it, so a
 * wrong one is the handler's error, reported at the handler (not the schema's, seven lines
 * deep through `meta.default`). Without `args`, an annotation still types the tool. How: a
 * type parameter intersected with something else is inferred from at a lower priority than
 * a bare one (`args: Schema<any, A>`), and the conditional here is `unknown` once `A` is known.
 */
type HandlerArgs<A> = A & (A extends unknown ? unknown : never)

/**
 * What a plugin author writes. `args` is a schemastery object schema; `A` is what it
 * returns, the type `run` receives.
 */
export interface ToolOptions<A = any> {
  /** `/^[a-zA-Z0-9_-]{1,64}$/`. */
  name: string
  /** What the tool does, written for a model choosing among tools. */
  description: string
  /** The arguments; `run` receives them validated, typed and defaulted. @default Schema.object({}) */
  args?: Schema<any, A>
  /** The permission this call needs. @default { name: `tool:${name}` } */
  permission?: (args: HandlerArgs<A>, call: ToolCall) => PermissionSpec
  traits?: ToolTraits
  /** `search` defers the tool behind `tool_search`. @default 'eager' */
  mode?: 'eager' | 'search'
  /** Advertised only where a toolset enables one of these groups. Ungrouped tools are always in. */
  groups?: string[]
  /** `always`: never reuse a remembered approval for this tool. */
  confirm?: 'always'
  /** Hide the tool from sessions where it makes no sense; hidden tools are neither listed nor callable. */
  visibility?: (session: Session) => boolean
  /**
   * What the call would do, without doing it (a diff, the whole command, the URL as
   * fetched): shown to whoever is asked to approve it. Runs after validation, only when a
   * person is asked; a preview that throws or takes over 5 s leaves a line saying so.
   */
  preview?: PreviewFunction<HandlerArgs<A>>
  /**
   * The schema of the result's `data`: a result whose `data` does not match it ends as an
   * `error` with code `output_invalid`. MCP lists it as the tool's `outputSchema`.
   */
  output?: Schema
  run: (args: HandlerArgs<A>, call: ToolCall) => ToolOutput | Promise<ToolOutput>
}

/** A tool after `defineTool`: checked, with traits resolved. Immutable. `A` is its arguments' type. */
export interface Tool<A = any> {
  readonly name: string
  readonly description: string
  readonly args: Schema<any, A>
  readonly traits: Readonly<Required<ToolTraits>>
  readonly mode: 'eager' | 'search'
  readonly groups: readonly string[]
  readonly confirm?: 'always'
  readonly visibility?: (session: Session) => boolean
  readonly permission?: (args: A, call: ToolCall) => PermissionSpec
  readonly preview?: PreviewFunction<A>
  readonly output?: Schema
  readonly run: (args: A, call: ToolCall) => ToolOutput | Promise<ToolOutput>
}
