import { enUS } from './en-us'
import type { ApprovalOutcome } from '../permission-gate'
import type { Denial, RuleCause } from '../types/denial'

/**
 * The structured form of a denial a gate gave as `reason`: its own `denial` (or, for an
 * authorization, its rule's `cause`) when that says in English exactly what `reason` says,
 * else the reason as the gate wrote it (`gate`): the model reads `reason` unchanged whatever
 * a gate sets, and a person reads the structured form only where it is the same decision.
 * `fallback` is the denial when the gate gave no reason at all.
 */
export function denialOf(reason: string | undefined, structured: Denial | undefined, fallback: Denial): Denial {
  if (reason === undefined) return fallback
  if (structured && rendersAs(structured, reason)) return structured
  return { cause: 'gate', reason: String(reason) }
}

/** `denialOf` of a deny from `authorize`: a rule's, a mode's or a malformed call's. */
export function ruleDenial(reason: string | undefined, cause: RuleCause | undefined): Denial {
  return denialOf(reason, cause ? { cause: 'rule', decided: cause } : undefined, { cause: 'rule' })
}

/** `denialOf` of an approval that did not allow: who declined, the timeout, or the gate's reason. */
export function outcomeDenial(outcome: ApprovalOutcome | undefined): Denial {
  return denialOf(outcome?.reason, outcome?.denial, { cause: 'not_approved' })
}

/** Whether `denial`'s English is `reason`; a malformed one (from another server's `_meta`) is not. */
function rendersAs(denial: Denial, reason: string): boolean {
  try {
    return enUS.denial(denial) === reason
  } catch {
    return false
  }
}
