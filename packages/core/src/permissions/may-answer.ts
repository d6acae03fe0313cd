import type { Approver, ApproverPolicy } from './asker'

/**
 * Whether `by` may answer a request with this policy: the caller (same id, and the same
 * platform when both are known) or anyone at or above the policy's authority. The
 * permission engine decides the same way when the answer arrives; checking first lets
 * an asker (a chat, a terminal) leave a request it could not answer to the others instead
 * of asking, or consuming a reply it would see ignored.
 */
export function mayAnswer(policy: ApproverPolicy, by: Approver): boolean {
  if (policy.userId !== undefined && by.id === policy.userId
    && (by.platform === undefined || policy.platform === undefined || by.platform === policy.platform)) return true
  return by.authority !== undefined && by.authority >= policy.authority
}
