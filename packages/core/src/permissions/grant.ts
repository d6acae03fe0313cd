import type { Session } from '../session'

/**
 * A remembered `session` or `always` answer. It covers one subject, one permission name
 * and one exact target (none matches only a call without a target).
 * - `session` grants cover the session id and user id of the call that was approved.
 * - `always` grants cover the user (platform + user id) in every session; a session
 *   without a user id is covered by its session id.
 */
export interface Grant {
  id: string
  scope: 'session' | 'always'
  subject: GrantSubject
  permission: string
  target?: string
  /** The tool whose call was approved; informational, not part of the key. */
  tool: string
  /** Who answered. */
  by: string
  createdAt: number
}

export interface GrantSubject {
  sessionId?: string
  userId?: string
  platform?: string
}

/** The subject a grant of `scope` made for this session covers. */
export function grantSubject(scope: Grant['scope'], session: Session): GrantSubject {
  if (scope === 'session' || session.userId === undefined) {
    const subject: GrantSubject = { sessionId: session.id }
    if (session.userId !== undefined) subject.userId = session.userId
    return subject
  }
  const subject: GrantSubject = { userId: session.userId }
  if (session.platform !== undefined) subject.platform = session.platform
  return subject
}

/**
 * The lookup path of a grant: who (a session and user, or a platform user), then the
 * permission and the target. Kept as separate keys of nested Maps, so a lookup builds no
 * string; `undefined` is a key of its own, distinct from every string.
 */
export type GrantPath = readonly ['s' | 'u', string | undefined, string | undefined, string, string | undefined]

export function grantPath(subject: GrantSubject, permission: string, target: string | undefined): GrantPath {
  return subject.sessionId !== undefined
    ? ['s', subject.sessionId, subject.userId, permission, target]
    : ['u', subject.platform, subject.userId, permission, target]
}
