import type { Approver, AskAnswer, AskScope } from './asker'

const DECISIONS = new Set(['allow', 'deny'])
const SCOPES = new Set<AskScope>(['once', 'session', 'always'])

/**
 * Who gave a well-formed answer, or `undefined` for a malformed one (no decision, no author,
 * a field of the wrong type): such an answer never ends a request.
 */
export function answerAuthor(answer: AskAnswer): Approver | undefined {
  if (!answer || typeof answer !== 'object' || !DECISIONS.has(answer.decision)) return undefined
  if (answer.scope !== undefined && !SCOPES.has(answer.scope)) return undefined
  if (answer.reason !== undefined && typeof answer.reason !== 'string') return undefined
  if (answer.via !== undefined && typeof answer.via !== 'string') return undefined
  return approverOf(answer.by)
}

function approverOf(by: unknown): Approver | undefined {
  if (typeof by === 'string') return by ? { id: by } : undefined
  if (!by || typeof by !== 'object') return undefined
  const { id, platform, authority, permissions } = by as Approver
  if (typeof id !== 'string' || !id) return undefined
  if (platform !== undefined && typeof platform !== 'string') return undefined
  if (authority !== undefined && typeof authority !== 'number') return undefined
  if (permissions !== undefined && !(Array.isArray(permissions) && permissions.every((name) => typeof name === 'string'))) return undefined
  const approver: Approver = { id }
  if (platform !== undefined) approver.platform = platform
  if (authority !== undefined) approver.authority = authority
  if (permissions !== undefined) approver.permissions = [...permissions]
  return approver
}

/** `discord:123`, or `123` without a platform. */
export function label(by: Approver): string {
  return by.platform ? `${by.platform}:${by.id}` : by.id
}
