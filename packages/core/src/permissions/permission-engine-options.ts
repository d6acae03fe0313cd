import type { Logger } from '../logger'
import type { Session } from '../session'
import { RULE_FIELDS } from './compile-rule'
import type { GrantStore } from './grant-store'
import type { ClosedRequest, PendingStore, StoredSession } from './pending-record'
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
  /**
   * Keep every question the pipeline asks in `pendingStore`, so that it outlives the process:
   * after a restart it is asked again, and an answer then runs the call once (see
   * `onResume`). `false` is today's behaviour: a question lives as long as the process.
   * A tool's form (`call.elicit`) is never kept.
   * @default true when `pendingStore` is given
   */
  durable?: boolean
  /** Where questions are kept (`durable`). @default a MemoryPendingStore when `durable` is true without one */
  pendingStore?: PendingStore
  /**
   * The most open requests kept at once; past it the oldest expire first (closed as an
   * expiry is). @default 1000
   */
  maxPending?: number
  /**
   * This instance's name in the pending store: which instance asked a request and which
   * claimed it. Give it a stable value (one per process sharing a database) for an
   * instance to recognise its own requests after a restart. @default a random id
   */
  instanceId?: string
  /**
   * A request found in the pending store and closed without being asked again: expired while
   * the process was down, a `call.ask` from inside a run, arguments with secret fields, a
   * record that does not read, or one past `maxPending`; or asked again, on a store no other
   * instance shares, and closed as its tool was still not defined here a minute after the
   * restart (`ClosedRequest.cause`). A host tells the record's channel
   * (Cordis: the `permissions/closed` event). Each is also a decision (`onDecision`).
   */
  onClosed?: (closed: ClosedRequest) => void
  /**
   * What a host keeps of a session beyond Dogu's fields when it keeps a request
   * (`StoredSession.host`; Koishi: the bot's `selfId`), to post the question again and deliver
   * the result in the same place after a restart.
   */
  sessionHost?: (session: Session) => StoredSession['host'] | undefined
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
