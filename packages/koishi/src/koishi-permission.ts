import type { ApproverPolicy, RuleCondition, Session as DoguSession } from '@dogu/core'
import type { Context, Session } from 'koishi'
import { koishiLogger } from './koishi-logger'

/**
 * A Dogu session mapped from Koishi, with the Koishi facts the rules need. `authorize` is
 * synchronous and Koishi's permission checks are not, so the facts are established when
 * the session is resolved (`ctx.permissions.resolveSession`), before any call is decided.
 */
export interface KoishiDoguSession extends DoguSession {
  /**
   * The Koishi permissions named by rules (`koishiPermission`) that the caller holds, as
   * Koishi's `ctx.permissions.test` answered when the session was resolved. Absent when it
   * was not resolved (a session mapped with `doguSession` alone, or built by hand).
   */
  koishiPermissions?: readonly string[]
  /**
   * Koishi's facts a host needs to speak in the session again after a restart, kept by a
   * durable request's record (`StoredSession.host`): the bot the call came through.
   */
  host?: Readonly<{ selfId?: string }>
}

/**
 * The permission names of a rule's `koishiPermission`: one name or a list, all of which
 * are needed. An empty list (what a config form leaves behind) narrows nothing, like the
 * empty `users` list. `undefined` for anything else.
 */
export function koishiPermissionNames(value: unknown): string[] | undefined {
  const names = typeof value === 'string' ? [value] : value
  if (!Array.isArray(names) || names.some((name) => typeof name !== 'string' || !name)) return undefined
  return names
}

/**
 * The rule field `koishiPermission`: the rule matches when the caller holds every named
 * Koishi permission (`authority:3`, `dogu.deploy`, or any name a Koishi plugin provides).
 *
 * A session whose facts were never resolved cannot say: then deny and ask rules match and
 * allow rules do not, so an unresolved session is never let through by such a rule nor
 * slips past its denial.
 */
export const koishiPermissionCondition: RuleCondition = {
  check: (value) => koishiPermissionNames(value)
    ? undefined
    : 'must be a Koishi permission name or a list of them, e.g. "authority:3" or ["dogu.deploy"]',
  match: (value, session, decision) => {
    const names = koishiPermissionNames(value)!
    if (!names.length) return true
    const held = (session as KoishiDoguSession).koishiPermissions
    if (!Array.isArray(held)) return decision !== 'allow'
    return names.every((name) => held.includes(name))
  },
}

/** The Koishi user facts Dogu reads: what Koishi's permission checks look at. */
export interface KoishiUserFacts {
  authority?: number
  permissions?: string[]
}

/**
 * The user as Koishi loaded it (`session.user`), completed from the user table when it
 * lacks an authority and a database is loaded. `undefined` when nothing is known.
 */
export async function koishiUser(ctx: Context, session: Session): Promise<KoishiUserFacts | undefined> {
  const user = session.user as KoishiUserFacts | undefined
  if (typeof user?.authority === 'number') return user
  const database = ctx.get('database')
  if (!database || session.platform === undefined || session.userId === undefined) return user
  try {
    const row = await database.getUser(session.platform, session.userId, ['authority', 'permissions'])
    return row ? { ...user, ...row } : user
  } catch (error) {
    koishiLogger(ctx).warn('reading user %s:%s from the database failed, using the default authority: %s', session.platform, session.userId, error)
    return user
  }
}

/**
 * For a Koishi asker: the Koishi permissions among a request's `approvers.permissions` that
 * the person who replied (`session`, the reply's session) holds, as Koishi's
 * `ctx.permissions.test` answers for that user. Report them as the answer's
 * `by.permissions`; the engine accepts the answer when one of them is a name the policy
 * lists. Nothing is tested when the policy names no permission.
 *
 * The user is read as for a caller (`session.user`, else the user table) with `authority`
 * as given, else as `ctx.permissions.resolveSession` resolves it (the configured default
 * for a user Koishi knows nothing about), so `authority:N` means what it means for rules;
 * never "no user", which Koishi's `authority:N` check would let through. A check that
 * throws counts as not held, and is logged.
 *
 * @example
 * const by: Approver = { id: session.userId!, platform: session.platform, authority }
 * const held = await approverPermissions(ctx, session, request.approvers, { authority })
 * if (held.length) by.permissions = held
 * if (mayAnswer(request.approvers, by)) respond({ decision: 'allow', by })
 */
export async function approverPermissions(ctx: Context, session: Session, policy: ApproverPolicy, options: { authority?: number } = {}): Promise<string[]> {
  const names = Array.isArray(policy?.permissions) ? [...new Set(policy.permissions.filter((name) => typeof name === 'string' && name))] : []
  if (!names.length) return []
  const user = await koishiUser(ctx, session)
  let authority = options.authority ?? user?.authority
  if (typeof authority !== 'number') {
    const resolve = (ctx.permissions as { resolveSession?: (session: Session) => Promise<DoguSession> }).resolveSession
    authority = typeof resolve === 'function' ? (await resolve.call(ctx.permissions, session)).authority : undefined
  }
  // Koishi's checks read `session.user`: always a user, with the authority resolved here.
  const asUser: Session = Object.create(session, { user: { value: { ...user, authority: authority ?? 0 } } })
  const cache = new Map<string, Promise<boolean>>()
  const held = await Promise.all(names.map(async (name) => {
    try {
      return await ctx.permissions.test([name], asUser, cache)
    } catch (error) {
      koishiLogger(ctx).warn('testing Koishi permission %s for approver %s:%s failed: %s', name, session.platform, session.userId, error)
      return false
    }
  }))
  return names.filter((_, i) => held[i])
}
