import type { ClosedRequest, PermissionEngine } from '@dogu/core'

/** Most closures kept while nobody tells them (the chat approvals are not loaded): the newest. */
const MAX_WAITING = 1_000

/**
 * Requests the permission engine closed without asking them again (`onClosed`: expired while
 * the bot was down, a run's own question, masked secrets, a corrupt record), kept until the
 * chat approvals tell their channels. The engine reads its store as the permissions service
 * starts or a database arrives, which may be before the chat approvals are loaded; what
 * closed meanwhile waits here.
 */
export class ClosedRequests {
  private waiting: ClosedRequest[] = []
  private listener?: (closed: ClosedRequest) => void

  push(closed: ClosedRequest): void {
    if (this.listener) return this.listener(closed)
    this.waiting.push(closed)
    if (this.waiting.length > MAX_WAITING) this.waiting.shift()
  }

  /** Hands every closure so far, then each new one, to `listener` (one at a time); the returned function stops it. */
  listen(listener: (closed: ClosedRequest) => void): () => void {
    this.listener = listener
    for (const closed of this.waiting.splice(0)) listener(closed)
    return () => {
      if (this.listener === listener) this.listener = undefined
    }
  }

  /** Makes these the closures of `engine`'s requests, for `closedRequestsOf`. */
  attach(engine: PermissionEngine): void {
    byEngine.set(engine, this)
  }
}

const byEngine = new WeakMap<PermissionEngine, ClosedRequests>()

/** A new list of closures, for the permissions service to push into and `attach` to its engine. */
export function keepClosedRequests(): ClosedRequests {
  return new ClosedRequests()
}

/** The closures of an engine's requests, when a Koishi permissions service made it. */
export function closedRequestsOf(engine: PermissionEngine): ClosedRequests | undefined {
  return byEngine.get(engine)
}
