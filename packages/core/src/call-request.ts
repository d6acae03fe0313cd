import type { ActiveCall } from './active-call'
import { CALL_SERIAL } from './events'
import type { AuthorizeRequest } from './permission-gate'
import type { PermissionSpec } from './tool'

/**
 * The permission a call needs: the tool's own, computed from the arguments, or `tool:<name>`.
 * `input` is the call's own arguments unless an approver's edit is being checked.
 */
export function permissionOf(call: ActiveCall, input: unknown = call.input): PermissionSpec {
  const { tool } = call
  return tool.permission ? tool.permission(input as any, call) : call.entry.defaultPermission
}

/** What the permission service is asked about a call; `args` (masked) are the call's unless an edit's. */
export function requestFor(call: ActiveCall, permission: PermissionSpec, confirm: 'always' | undefined, args: unknown = call.args): AuthorizeRequest & { callId: string; [CALL_SERIAL]: number } {
  return {
    // The model's id, so a decision event names its call for people and logs.
    callId: call.id,
    session: call.session,
    permission,
    effect: permission.effect ?? call.tool.traits.effect,
    tool: call.name,
    args,
    confirm,
    // The pipeline's own identity of the call, which the audit log correlates by (the model's
    // ids may repeat); last, after the literal's plain fields. Approvals spread from it carry it.
    [CALL_SERIAL]: call[CALL_SERIAL],
  }
}
