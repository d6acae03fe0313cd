import type { RuleCondition, Session as DoguSession } from '@dogu/core'

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
