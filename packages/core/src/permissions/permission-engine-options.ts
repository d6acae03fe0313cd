import type { Logger } from '../logger'
import { RULE_FIELDS } from './compile-rule'
import type { GrantStore } from './grant-store'
import type { DecisionEvent } from './permission-decision'
import { PermissionError } from './permission-error'
import type { PermissionMode } from './permission-modes'
import type { PermissionRule, RuleCondition } from './permission-rule'

export interface PermissionEngineOptions {
  /** Rules from config; their origin in events reads `config.rules[i]`. */
  rules?: readonly PermissionRule[]
  /** The mode of sessions that have none of their own. @default 'default' */
  mode?: PermissionMode
  /** Milliseconds a permission request waits for an answer before it is denied. @default 300_000 */
  askTimeout?: number
  /**
   * Who may answer a request: see `caller` and `authority`. An ask rule's own `approvers`
   * decide for the questions it asks (`RuleApprovers`).
   */
  approvers?: {
    /** The calling user may answer their own request. @default true */
    caller?: boolean
    /** Users at or above this authority may answer any request. @default 4 */
    authority?: number
  }
  /**
   * Rule fields a host adds, by name (Koishi: `koishiPermission`). A rule naming one is
   * matched by its `match` as well; any other unknown field is still an `INVALID_RULE`.
   */
  conditions?: Readonly<Record<string, RuleCondition>>
  /** Where `always` grants persist. @default a MemoryGrantStore (forgotten on restart) */
  store?: GrantStore
  /** Receives every decision: the `permissions/decision` event. */
  onDecision?: (event: DecisionEvent) => void
  /**
   * Asked before each decision event is built; `false` skips it. A host that knows
   * nobody listens saves the event's cost on every call.
   */
  wantsDecision?: () => boolean
  logger?: Logger
}

/** The host's rule fields, checked: none may shadow a built-in field, each needs a `match`. */
export function checkConditions(conditions: PermissionEngineOptions['conditions']): ReadonlyMap<string, RuleCondition> {
  const map = new Map<string, RuleCondition>()
  if (conditions === undefined) return map
  if (!conditions || typeof conditions !== 'object') throw new PermissionError('INVALID_OPTIONS', 'conditions must be an object of { check?, match } by field name')
  for (const [name, condition] of Object.entries(conditions)) {
    if (RULE_FIELDS.has(name)) throw new PermissionError('INVALID_OPTIONS', `conditions.${name}: "${name}" is a built-in rule field`)
    if (typeof condition?.match !== 'function') throw new PermissionError('INVALID_OPTIONS', `conditions.${name} needs a match(value, session, decision) function`)
    map.set(name, condition)
  }
  return map
}
