import type { Decision } from '../types/decision'
import type { Session } from '../session'
import type { ApproverPolicy } from './asker'
import type { RuleApprovers } from './permission-rule'

const FIELDS = ['users', 'authority', 'permissions', 'caller'] as const
const KNOWN: ReadonlySet<string> = new Set(FIELDS)

/** The engine's own approvers: who may answer when no rule says (`PermissionEngineOptions.approvers`). */
export interface DefaultApprovers {
  authority: number
  caller: boolean
}

/**
 * Checks a rule's `approvers`: a problem naming the field (`"approvers.authority" must be
 * …`), or nothing. Only ask rules ask; an allow or deny rule with approvers that name
 * anyone is a mistake worth failing on, an empty one (a config form's) is not.
 */
export function checkApprovers(value: unknown, decision: Decision): string | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    return `"approvers" must be an object like { users, authority, permissions, caller } when set, got ${JSON.stringify(value)}`
  }
  const approvers = value as Record<string, unknown>
  for (const key of Object.keys(approvers)) {
    if (!KNOWN.has(key)) return `unknown field "approvers.${key}" (known: ${FIELDS.join(', ')})`
  }
  for (const key of ['users', 'permissions'] as const) {
    const list = approvers[key]
    if (list !== undefined && (!Array.isArray(list) || list.some((item) => typeof item !== 'string' || !item))) {
      return `"approvers.${key}" must be an array of non-empty strings when set, got ${JSON.stringify(list)}`
    }
  }
  const { authority, caller } = approvers
  if (authority !== undefined && !(typeof authority === 'number' && authority >= 0 && Number.isFinite(authority))) {
    return `"approvers.authority" must be a number ≥ 0 when set, got ${JSON.stringify(authority)}`
  }
  if (caller !== undefined && typeof caller !== 'boolean') return `"approvers.caller" must be true or false when set, got ${JSON.stringify(caller)}`
  if (decision !== 'ask' && (names(value as RuleApprovers) || caller !== undefined)) {
    return `"approvers" applies only to ask rules (they decide who may answer the question), not to a "${decision}" rule`
  }
  return undefined
}

/** A deep-frozen copy of checked approvers, so nobody changes a rule through `request.asked.rule`. */
export function freezeApprovers(approvers: RuleApprovers): Readonly<RuleApprovers> {
  const copy: RuleApprovers = { ...approvers }
  if (copy.users) copy.users = Object.freeze([...copy.users]) as string[]
  if (copy.permissions) copy.permissions = Object.freeze([...copy.permissions]) as string[]
  return Object.freeze(copy)
}

/**
 * The `ApproverPolicy` of a request: the engine's (caller and `authority`) when the rule
 * that asked names no approvers, else the rule's `users`, `permissions` and `authority`,
 * and the caller unless `caller` (or else the engine's default) leaves them out. `platform`
 * is the caller's either way.
 */
export function approverPolicy(session: Session, approvers: Readonly<RuleApprovers> | undefined, defaults: DefaultApprovers): Readonly<ApproverPolicy> {
  const caller = approvers?.caller ?? defaults.caller
  const policy: ApproverPolicy = {}
  if (caller && session.userId !== undefined) policy.userId = session.userId
  if (session.platform !== undefined) policy.platform = session.platform
  if (!approvers || !names(approvers)) {
    policy.authority = defaults.authority
    return Object.freeze(policy)
  }
  if (approvers.users?.length) policy.users = Object.freeze([...approvers.users])
  if (approvers.permissions?.length) policy.permissions = Object.freeze([...approvers.permissions])
  if (approvers.authority !== undefined) policy.authority = approvers.authority
  return Object.freeze(policy)
}

/** Whether approvers name anyone (beside the caller): then they, not grants, answer the rule's questions. */
export function names(approvers: Readonly<RuleApprovers> | undefined): boolean {
  if (!approvers) return false
  return !!approvers.users?.length || !!approvers.permissions?.length || approvers.authority !== undefined
}
