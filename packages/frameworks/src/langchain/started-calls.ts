import { RecentMap } from '../common/recent-map'
import type { ApprovalInterrupt } from './graph-approval'

/** Calls remembered: far more than one graph node runs between an interrupt and its resume. */
const MAX_CALLS = 512

/** A call a graph node made: its output (settled or not), and the question it asked first, if any. */
export interface StartedCall<T> {
  output: Promise<T>
  asked?: ApprovalInterrupt
}

/**
 * The calls made inside LangGraph tasks, by session and call id. On resume LangGraph runs the
 * interrupted node again from its start, so every call of that node comes back: a call that
 * already started (one that ran beside the one that asked, or one approved by an earlier
 * resume while another call of the node asked next) answers with its first output instead of
 * running its tool again. LangGraph's ToolNode treats a tool call id as once per thread too (it
 * skips calls that already have a ToolMessage). Kept in memory: after a restart, only the calls
 * of the node that asked run again, so give each call its own task (LangGraph's `Send`) where
 * that matters.
 */
export class StartedCalls<T> {
  private calls = new RecentMap<string, StartedCall<T>>(MAX_CALLS)

  get(session: string, callId: string): StartedCall<T> | undefined {
    return this.calls.get(keyOf(session, callId))
  }

  add(session: string, callId: string, call: StartedCall<T>): void {
    this.calls.set(keyOf(session, callId), call)
  }
}

function keyOf(session: string, callId: string): string {
  // JSON keeps the two apart whatever characters either holds.
  return JSON.stringify([session, callId])
}
