import type { Session, Toolset } from '@dogu/core'
import { RecentMap } from './recent-map'

/** Toolsets kept per framework session: enough for a server's live conversations. */
const MAX_SESSIONS = 1000

/**
 * The adapter's toolset for each session the framework names (a thread, a conversation):
 * the given toolset when it names none or names the toolset's own, else
 * `toolset.forSession`, kept so that a session's calls share one toolset (the oldest is
 * dropped past `MAX_SESSIONS`; a dropped one is made again, and grants and quotas live in
 * the engines, not here).
 */
export class SessionToolsets {
  private made = new RecentMap<string, Toolset>(MAX_SESSIONS)

  constructor(readonly base: Toolset) {}

  /** The toolset for session `id` (the base toolset's session, with this id). */
  get(id: string | undefined): Toolset {
    if (id === undefined || id === this.base.session.id) return this.base
    let toolset = this.made.get(id)
    if (toolset) return toolset
    const session: Session = { ...this.base.session, id }
    toolset = this.base.forSession(session)
    this.made.set(id, toolset)
    return toolset
  }
}
