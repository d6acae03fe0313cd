import type { AuthorizeRequest, AuthorizeResult } from '../permission-gate'
import type { Effect } from '../types/effect'
import { normalizeTarget } from './compile-rule'
import type { GrantLedger } from './grant-ledger'
import { EFFECT_DEFAULTS, knownEffect, PERMISSION_MODES, type PermissionMode } from './permission-modes'
import type { RuleIndex } from './rule-index'
import type { SessionModes } from './session-modes'

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

const MALFORMED: AuthorizeResult = Object.freeze({
  decision: 'deny',
  reason: 'the call named no valid permission (a permission name string, an optional target string, and a session with an id are required)',
  rule: Object.freeze({ kind: 'default', effect: 'exec' }),
})

const DEFAULT_RESULTS = Object.fromEntries(Object.entries(EFFECT_DEFAULTS).map(([effect, decision]) => [effect, Object.freeze({
  decision,
  reason: decision === 'allow' ? `no rule matches; ${effect} tools are allowed by default` : `no rule matches; ${effect} tools need approval by default`,
  rule: Object.freeze({ kind: 'default', effect }),
})])) as Record<Effect, Readonly<AuthorizeResult>>

const MODE_RESULTS = Object.fromEntries(Object.entries(PERMISSION_MODES).map(([mode, table]) => [mode, Object.fromEntries(
  Object.entries(table).map(([effect, decision]) => [effect, Object.freeze({
    decision,
    reason: `the session is in ${mode} mode, which ${decision === 'deny' ? 'denies' : 'allows'} ${effect} tools`,
    rule: Object.freeze({ kind: 'mode', mode }),
  })]),
)])) as Record<PermissionMode, Partial<Record<Effect, Readonly<AuthorizeResult>>>>
