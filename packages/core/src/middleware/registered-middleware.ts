import type { ToolMiddleware } from './tool-middleware'

// Its own file: a tool entry keeps the chain that matches it, and the stack matches against
// entries, so the shape they share sits below both.

/** One registered middleware. */
export interface RegisteredMiddleware {
  readonly run: ToolMiddleware
  /** How results and logs name it: `middleware "cap" (plugin "policy")`. */
  readonly label: string
  /** Its bare name, for spans and the audit log. */
  readonly name: string
  /** The plugin that registered it, as results name it (`plugin "policy"`). */
  readonly plugin?: string
  readonly order: number
  readonly sequence: number
  readonly matches: ((tool: string) => boolean) | undefined
}
