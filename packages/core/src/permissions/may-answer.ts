import type { Approver, ApproverPolicy } from './asker'

/**
 * Whether `by` may answer a request with this policy: anyone who meets one of its parts —
 * the caller (same id, and the same platform when both are known), a listed user (a plain
 * id on any platform, `platform:id` on that platform only), a holder of one of its host
 * permissions as the asker attests (`by.permissions`), or anyone at or above its authority.
 * The permission engine decides the same way when the answer arrives; checking first lets
 * an asker (a chat, a terminal) leave a request it could not answer to the others instead
 * of asking, or consuming a reply it would see ignored.
 */
export function mayAnswer(policy: ApproverPolicy, by: Approver): boolean {
  if (policy.userId !== undefined && by.id === policy.userId
    && (by.platform === undefined || policy.platform === undefined || by.platform === policy.platform)) return true
  const { users, permissions, authority } = policy
  if (users?.length && (users.includes(by.id) || (typeof by.platform === 'string' && users.includes(`${by.platform}:${by.id}`)))) return true
  // Only names the policy lists: an asker attesting anything else proves nothing.
  if (permissions?.length && Array.isArray(by.permissions) && by.permissions.some((name) => permissions.includes(name))) return true
  return authority !== undefined && typeof by.authority === 'number' && by.authority >= authority
}

/**
 * Who may answer, in words for logs and askers: `the caller (discord:u1) or users with
 * authority ≥ 4`, `users discord:42, ops or holders of dogu.ops`, or `nobody`.
 */
export function describeApprovers(policy: ApproverPolicy): string {
  const who: string[] = []
  if (policy.userId !== undefined) who.push(`the caller (${policy.platform ? policy.platform + ':' : ''}${policy.userId})`)
  if (policy.users?.length) who.push(`users ${policy.users.join(', ')}`)
  if (policy.permissions?.length) who.push(`holders of ${policy.permissions.join(', ')}`)
  if (policy.authority !== undefined) who.push(`users with authority ≥ ${policy.authority}`)
  return who.length ? who.join(' or ') : 'nobody'
}
