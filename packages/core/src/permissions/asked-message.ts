import type { Effect } from '../types/effect'
import type { PermissionRequest } from './asker'

/**
 * Why a person is asked, as a message key and its parameters, for askers that word it in
 * their user's language (Koishi's chat, the consoles) instead of showing the English `reason`.
 */
export interface AskedMessage {
  /** `default`: no rule matched; `rule`, `rule-target`, `rule-named`: a rule asked. */
  key: 'default' | 'rule' | 'rule-target' | 'rule-named'
  params: { effect?: Effect; name?: string; permission?: string; target?: string; origin?: string }
}

/**
 * The message for what asked, or undefined when the tool asked for itself
 * (`call.ask(reason)`): its reason is the tool's own words, shown as written.
 *
 * @example
 * askedMessage(request) // { key: 'default', params: { effect: 'exec' } }
 */
export function askedMessage({ asked }: Pick<PermissionRequest, 'asked'>): AskedMessage | undefined {
  if (!asked) return undefined
  if (asked.kind === 'default') return { key: 'default', params: { effect: asked.effect } }
  const { rule, origin } = asked
  if (rule.name) return { key: 'rule-named', params: { name: rule.name, origin } }
  const target = rule.target ?? rule.command
  return target === undefined
    ? { key: 'rule', params: { permission: rule.permission, origin } }
    : { key: 'rule-target', params: { permission: rule.permission, target, origin } }
}
