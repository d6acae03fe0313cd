import type { Decision } from '../types/decision'
import type { Effect } from '../types/effect'

/**
 * How permissive a session is. Explicit deny rules win in every mode.
 * - `default`: rules, then the effect defaults.
 * - `readOnly`: everything but `read` is denied.
 * - `acceptEdits`: `write` is allowed; `exec` still follows the rules.
 * - `trust`: everything is allowed.
 */
export type PermissionMode = 'default' | 'readOnly' | 'acceptEdits' | 'trust'

/** What a mode decides per effect, right after deny rules; a missing effect follows the rules. */
export const PERMISSION_MODES: Readonly<Record<PermissionMode, Readonly<Partial<Record<Effect, Decision>>>>> = Object.freeze({
  default: Object.freeze({}),
  readOnly: Object.freeze({ write: 'deny', exec: 'deny' }),
  acceptEdits: Object.freeze({ write: 'allow' }),
  trust: Object.freeze({ read: 'allow', write: 'allow', exec: 'allow' }),
})

/** The decision when no rule matches. */
export const EFFECT_DEFAULTS: Readonly<Record<Effect, Decision>> = Object.freeze({
  read: 'allow',
  write: 'ask',
  exec: 'ask',
})

export function isPermissionMode(value: unknown): value is PermissionMode {
  return typeof value === 'string' && Object.hasOwn(PERMISSION_MODES, value)
}

/** An effect the engine knows, or `exec`: undeclared means worst case. */
export function knownEffect(effect: unknown): Effect {
  return typeof effect === 'string' && Object.hasOwn(EFFECT_DEFAULTS, effect) ? effect as Effect : 'exec'
}
