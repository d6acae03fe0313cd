import type { MaxRunning, PermissionMode, PermissionRule, QuotaRule } from '@dogu/core'

// What one run of the harness is: a configuration and a batch of calls, as plain data, so
// fast-check can generate it, shrink it and print it. Every option a user can set that changes
// what a call may do belongs here as a dimension (docs/invariants.md, "Adding a dimension").

export type HostName = 'cordis' | 'koishi'

/**
 * Who answers, and which of the host's views are read. `asker`: a scripted asker answers the
 * engine's question; `chat` (Koishi): the bot asks in the mock channel and a scripted person
 * answers there (`y` / `s` / `n` / `e {json}`); `framework`: an agent framework's user, as
 * @dogu/frameworks asks them (issue 49): each call is put to `toolset.decide` first, and the
 * person's answer to one it would ask about is handed to `execute` as that call's `answers`.
 * `console` (Cordis): the WebUI console is loaded, and its approval and log views are read
 * through its HTTP API.
 */
export interface HostSpec {
  name: HostName
  approver: Approver
  console: boolean
}

export type Approver = 'asker' | 'chat' | 'framework'

/** How the scripted approver answers each question it is shown. */
export type Answer =
  | { kind: 'allow'; scope: 'once' | 'session' }
  | { kind: 'deny' }
  /** Says nothing: the question expires after `askTimeout`. */
  | { kind: 'silent' }
  /** Cancels the whole batch instead of answering. */
  | { kind: 'cancel' }
  /** Approves with the arguments changed: merged key by key over what it was shown, as chat's `e {json}` does. */
  | { kind: 'edit'; edit: EditKind }

/** valid: a field the schema names, same permission; unknown-key: a misspelled field; invalid: a value the schema refuses; permission: a change of target. */
export type EditKind = 'valid' | 'unknown-key' | 'invalid' | 'permission'

export type Middleware = 'none' | 'rewrite' | 'end'

/**
 * What a third party does to the file of an asked `write` or `edit` between the question
 * (its preview) and the answer: rewrite it, write back the very bytes shown, or remove it.
 */
export type Tamper = 'none' | 'rewrite' | 'same' | 'remove'

/**
 * After the run, the last file change is undone: as it is (`plain`), with its path replaced
 * by a link to another workspace file of the same content (`link`), or with its parent
 * directory replaced by a link to a copy of it (`parent-link`).
 */
export type Undo = 'none' | 'plain' | 'link' | 'parent-link'

export interface CallSpec {
  id: string
  tool: string
  /** The arguments the model sent: an object, or text (JSON, possibly malformed). */
  arguments: Record<string, unknown> | string
}

export interface Scenario {
  mode: PermissionMode
  rules: PermissionRule[]
  repair: boolean
  answer: Answer
  middleware: Middleware
  quotas: QuotaRule[]
  maxRunning?: MaxRunning
  /** The audit log's `maxRecords`. */
  maxRecords: number
  /** `permissions.durable`: each question is kept in pending.json while it waits. Absent: Dogu's default (on). */
  durable?: boolean
  /** Cancel the batch before it starts. */
  cancelBefore: boolean
  calls: CallSpec[]
  /** Calls to an unknown tool sent as a second batch, after the first has ended. */
  flood: number
  tamper: Tamper
  undo: Undo
}

/** The sandbox dimensions of the `bash` property. */
export interface SandboxSpec {
  sandbox: 'full' | 'unavailable' | 'off'
  network: 'none' | 'host' | string[]
}

/** Every secret value the harness generates starts so; no other generated text contains it. */
export const SECRET_PREFIX = 'sk-live-'
/** A secret the tool's pattern refuses: it must not be echoed by the validation error either. */
export const BAD_SECRET_PREFIX = 'pk-live-'

/** The scenario as a person reads it in a failure report: one line per part. */
export function describeScenario(scenario: Scenario, sandbox?: SandboxSpec, host?: HostSpec): string {
  const lines = [
    ...(host ? [`host: ${host.name}   approver: ${host.approver}   console: ${host.console ? 'read through its API' : 'not loaded'}`] : []),
    `mode: ${scenario.mode}   repair: ${scenario.repair ? 'on' : 'off'}   middleware: ${scenario.middleware}   audit maxRecords: ${scenario.maxRecords}   durable: ${scenario.durable === false ? 'off' : 'on'}`,
    `approver: ${JSON.stringify(scenario.answer)}   cancel before: ${scenario.cancelBefore}`,
    `rules: ${scenario.rules.length ? scenario.rules.map((rule) => JSON.stringify(rule)).join(', ') : 'none'}`,
    `quotas: ${scenario.quotas.length ? JSON.stringify(scenario.quotas) : 'none'}   maxRunning: ${scenario.maxRunning ? JSON.stringify(scenario.maxRunning) : 'none'}`,
    `between question and answer: ${scenario.tamper === 'none' ? 'nothing' : `a third party ${scenario.tamper === 'same' ? 'writes back the same bytes' : scenario.tamper === 'remove' ? 'removes the file' : 'rewrites the file'}`}   after the run: ${scenario.undo === 'none' ? 'no undo' : `undo of the last change${scenario.undo === 'plain' ? '' : scenario.undo === 'link' ? ', its path replaced by a link to a file of the same content' : ', its parent replaced by a link to a copy'}`}`,
  ]
  if (sandbox) lines.push(`sandbox: ${sandbox.sandbox}   network: ${JSON.stringify(sandbox.network)}`)
  lines.push(`calls (${scenario.calls.length}):`)
  for (const call of scenario.calls) lines.push(`  ${call.id}  ${call.tool}(${typeof call.arguments === 'string' ? `raw ${JSON.stringify(call.arguments)}` : JSON.stringify(call.arguments)})`)
  if (scenario.flood) lines.push(`then a second batch: ${scenario.flood} calls to an unknown tool`)
  return lines.join('\n')
}
