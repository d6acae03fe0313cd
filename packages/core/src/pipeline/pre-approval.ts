import type { ActiveCall } from '../active-call'
import type { Effect, PermissionSpec } from '../types/effect'

/**
 * Calls a permission engine approved before they were prepared: an answer given after a
 * restart (`ResumeCalls`), decided again by the engine as it came. The mark is the call
 * object itself, kept here and nowhere else: a model's call is a new `ActiveCall` that
 * `prepare` made, never in this map, whatever its id, name or arguments say. The
 * authorize stage takes it once.
 */
const approvals = new WeakMap<ActiveCall, Readonly<PermissionSpec>>()

/** Marks `call` approved for `permission`: its authorize stage asks no one, once. */
export function preApprove(call: ActiveCall, permission: PermissionSpec): void {
  approvals.set(call, Object.freeze({ ...permission }))
}

/** The permission `call` was approved for, taken (a second read finds none). */
export function takePreApproval(call: ActiveCall): Readonly<PermissionSpec> | undefined {
  const approved = approvals.get(call)
  if (approved) approvals.delete(call)
  return approved
}

/**
 * Whether a call needing `needed` is what was approved: the same permission and target, the
 * same effect (a spec's own, else the tool's) and the same sandbox claim. The reason shown
 * on the card may differ; anything a rule matches may not.
 */
export function coversPermission(approved: Readonly<PermissionSpec>, needed: PermissionSpec, toolEffect: Effect): boolean {
  return approved.name === needed.name
    && approved.target === needed.target
    && (approved.effect ?? toolEffect) === (needed.effect ?? toolEffect)
    && !!approved.sandboxed === !!needed.sandboxed
}

/** A permission's name and target, as a denial's parameters name it. */
export function permissionOnly(permission: Readonly<PermissionSpec>): Pick<PermissionSpec, 'name' | 'target'> {
  return permission.target === undefined ? { name: permission.name } : { name: permission.name, target: permission.target }
}
