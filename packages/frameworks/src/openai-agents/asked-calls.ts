import { RecentMap } from '../common/recent-map'

/** Calls kept: enough for the interruptions of the runs in flight. */
const MAX_KEPT = 1000

/**
 * The calls Dogu's tools interrupted a run for, by session, tool and call id, with the
 * arguments the SDK asked about: the SDK tells `toolErrorFormatter` of a rejection with no
 * arguments, and Dogu audits the rejection as the call's answer with them. In memory, this
 * process only; the oldest is dropped past `MAX_KEPT`.
 */
const asked = new RecentMap<string, unknown>(MAX_KEPT)

const keyOf = (sessionId: string, tool: string, callId: string) => JSON.stringify([sessionId, tool, callId])

export function rememberAsked(sessionId: string, tool: string, callId: string, input: unknown): void {
  asked.set(keyOf(sessionId, tool, callId), input)
}

/** The arguments asked about, forgotten as they are taken; `undefined` when this process did not ask. */
export function takeAsked(sessionId: string, tool: string, callId: string): { input: unknown } | undefined {
  const key = keyOf(sessionId, tool, callId)
  if (!asked.has(key)) return undefined
  const input = asked.get(key)
  asked.delete(key)
  return { input }
}
