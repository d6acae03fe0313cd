import type { AuthorizeRequest, AuthorizeResult } from '../permission-gate'
import type { Effect } from '../types/effect'
import { normalizeTarget } from './compile-rule'
import type { GrantLedger } from './grant-ledger'
import { EFFECT_DEFAULTS, knownEffect, PERMISSION_MODES, type PermissionMode } from './permission-modes'
import type { RuleIndex } from './rule-index'
import type { SessionModes } from './session-modes'
import { enUS } from '../messages/en-us'
import type { Decision } from '../types/decision'
import type { RuleCause } from '../types/denial'

/**
 * Decides a call in the order `PermissionEngine` documents: deny rules, the session's mode,
 * ask and allow rules, the effect default, then grants for an `ask`. Every result is built
 * once, so the common path allocates nothing.
 */
export function decideCall(request: AuthorizeRequest, rules: RuleIndex, modes: SessionModes, grants: GrantLedger): AuthorizeResult {
  const name = request?.permission?.name
  const target = request?.permission?.target
  if (typeof name !== 'string' || (target !== undefined && typeof target !== 'string') || typeof request.session?.id !== 'string') {
    return MALFORMED
  }
  const effect = knownEffect(request.effect)
  const path = target === undefined ? undefined : normalizeTarget(target)
  const sandboxed = request.permission.sandboxed
  let matched
  for (const rule of rules.candidates(name)) {
    if (rule.matchCall(request.session, target, path, sandboxed)) {
      matched = rule
      break
    }
  }
  if (matched?.decision === 'deny') return matched.result
  const forced = MODE_RESULTS[modes.of(request.session.id)][effect]
  if (forced) return forced
  const result = matched?.result ?? DEFAULT_RESULTS[effect]
  if (result.decision !== 'ask' || request.confirm === 'always' || matched?.ownApprovers) return result
  return grants.find(request.session, name, target) ?? result
}

/** A result built once: its reason is the model's English of its cause. */
function decided(decision: Decision, cause: RuleCause, rule: object): Readonly<AuthorizeResult> {
  return Object.freeze({ decision, reason: enUS.decided(cause), cause: Object.freeze(cause), rule: Object.freeze(rule) })
}

const MALFORMED = decided('deny', { kind: 'malformed' }, { kind: 'default', effect: 'exec' })

const DEFAULT_RESULTS = Object.fromEntries(Object.entries(EFFECT_DEFAULTS).map(([effect, decision]) => [effect,
  decided(decision, { kind: 'default', decision, effect: effect as Effect }, { kind: 'default', effect }),
])) as Record<Effect, Readonly<AuthorizeResult>>

const MODE_RESULTS = Object.fromEntries(Object.entries(PERMISSION_MODES).map(([mode, table]) => [mode, Object.fromEntries(
  Object.entries(table).map(([effect, decision]) => [effect, decided(decision, { kind: 'mode', decision, mode, effect: effect as Effect }, { kind: 'mode', mode })]),
)])) as Record<PermissionMode, Partial<Record<Effect, Readonly<AuthorizeResult>>>>
