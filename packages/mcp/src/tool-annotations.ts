import type { Effect, ToolTraits } from '@dogu/core'
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js'

// MCP's hints default to the worst case (destructive, open-world), as Dogu's traits do, so
// each effect states every hint it differs on: `write` is closed-world, which is what tells
// it from `exec` on the way back.
const ANNOTATIONS: Readonly<Record<Effect, Readonly<ToolAnnotations>>> = Object.freeze({
  read: Object.freeze({ readOnlyHint: true, destructiveHint: false }),
  write: Object.freeze({ readOnlyHint: false, destructiveHint: true, openWorldHint: false }),
  exec: Object.freeze({ readOnlyHint: false, destructiveHint: true, openWorldHint: true }),
})

/** The MCP annotations a tool's traits imply: read → read-only; write → destructive; exec → destructive and open-world. */
export function annotationsOf(traits: Readonly<ToolTraits>, title?: string): ToolAnnotations {
  const annotations = { ...ANNOTATIONS[traits.effect ?? 'exec'] }
  return title === undefined ? annotations : { title, ...annotations }
}

/**
 * The effect a trusted server's annotations claim: read-only → `read`; closed-world and not
 * read-only → `write`; anything else (or nothing) → `exec`.
 */
export function effectOf(annotations: ToolAnnotations | undefined): Effect {
  if (annotations?.readOnlyHint === true) return 'read'
  if (annotations?.openWorldHint === false) return 'write'
  return 'exec'
}
