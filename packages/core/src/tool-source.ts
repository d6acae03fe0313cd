/**
 * Something that brings tools in from outside, such as an imported MCP server, and can be
 * without them for a while: connecting, reconnecting, or waiting for a person to
 * authorize it. The consoles list sources; a toolset says which ones are missing and why.
 */
export interface ToolSource {
  /** Unique per kind: the MCP server's name. */
  readonly name: string
  /** What it is: `mcp` for an imported MCP server. */
  readonly kind: string
  /** `connected` when its tools are there; anything else (`connecting`, `reconnecting`, `needs-authorization`, `closed`) when they are not. */
  readonly status: string
  /** The Dogu names of the tools it has defined now. */
  readonly tools: readonly string[]
  /** Why it is not connected, when it says. */
  readonly lastError?: string
  /** Whether a person has to authorize it (OAuth) before it has tools. */
  readonly needsAuthorization?: boolean
  /**
   * Starts an authorization for the operator `by` and gives the URL to open; the redirect
   * comes back to `authorize`. Only sources that authorize have it.
   */
  startAuthorization?(by?: string): Promise<string>
  /** Completes an authorization with what the redirect brought back (`state` binds it to the one started, and to `by`). */
  authorize?(code: string, state: string, by?: string): Promise<void>
  /**
   * Who started the authorization under way whose state is `state`: `{ by }` (no `by` when
   * nobody in particular did), or `undefined` when none with this state is. For a redirect
   * route that cannot tell who opens it (Koishi's server): there, holding the state (a
   * random secret given only to the one who started it) is the binding.
   */
  authorizationBy?(state: string): { by?: string } | undefined
}

/** A source whose tools a toolset does not have, and why: what `toolset.unavailable()` lists. */
export interface UnavailableSource {
  kind: string
  name: string
  status: string
  reason: string
}

/** Sources not connected, as a toolset reports them. */
export function unavailableSources(sources: Iterable<ToolSource>): UnavailableSource[] {
  const result: UnavailableSource[] = []
  for (const source of sources) {
    if (source.status === 'connected' || source.status === 'closed') continue
    const reason = source.needsAuthorization ? 'needs authorization by an operator (the console\'s MCP servers view)' : source.lastError ?? source.status
    result.push({ kind: source.kind, name: source.name, status: source.status, reason })
  }
  return result.sort((a, b) => a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name))
}
