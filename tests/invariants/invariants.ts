import { isDeepStrictEqual } from 'node:util'
import { maskSecrets, secretPaths, TOOL_STATUSES } from '@dogu/core'
import { FRAMEWORK_VIA } from './approvers'
import { channelTexts, serialize } from './channels'
import { deployArgs, type RunRecord } from './instrumented-tools'
import { shownFile } from './previewed-content'
import type { RunOutcome } from './run-scenario'
import { changedPaths, isProtected } from './workspace-tree'

// I1–I6 of issue 43 as checks over one run's observations. Each returns what it found wrong,
// in words a person can act on; an empty list is a pass. docs/invariants.md says what each
// promises and where the harness stops (what it does not check).

export interface Violation {
  invariant: 'I1' | 'I2' | 'I3' | 'I4' | 'I5' | 'I6'
  message: string
}

const deploySecrets = secretPaths(deployArgs)
const masked = (record: { tool: string; args: unknown }) => record.tool === 'deploy' ? maskSecrets(record.args, deploySecrets) : record.args
const SECRET = /[sp]k-live-[0-9a-f]{10}/g
/** Results of calls the pipeline refused before any permission check: nobody authorized them. */
const REFUSED_EARLY = new Set(['unknown_tool', 'invalid_arguments'])

/** I1: what ran is what a rule allowed, or what a person approved after their edit: arguments, effect and target. */
export function checkWhatRan({ observations, runs }: RunOutcome): Violation[] {
  const violations: Violation[] = []
  for (const run of runs) {
    const shown = masked(run) as Record<string, unknown>
    const allowed = observations.decisions.filter((event) => event.request.callId === run.callId && event.request.tool === run.tool && event.decision === 'allow')
    const sameAction = (event: (typeof allowed)[number]) => event.request.permission.target === run.target && event.request.effect === run.effect
    const rewrite = observations.rewrites.find((item) => item.callId === run.callId && item.tool === run.tool && isDeepStrictEqual(item.args, shown))
    const exact = allowed.some((event) => sameAction(event) && isDeepStrictEqual(event.request.args, shown))
    // Edits accepted for a call of this id and tool (the model may reuse an id): the run is
    // held to the one it matches key by key, if any.
    const edits = observations.approver.filter((action) => action.callId === run.callId && action.tool === run.tool && action.answer === 'edit' && action.verdict === 'accepted' && action.value)
    const lostKeys = (value: Record<string, unknown>) => Object.keys(value).filter((key) => !isDeepStrictEqual(value[key], shown[key]))
    const edit = edits.find((action) => !lostKeys(action.value!).length)
    // A field the schema does not name reaches `run` but means nothing to the tool: a person
    // who set it (`e {"Env":"staging"}`) approved a call other than the one that runs.
    if (run.unknownKeys.length) violations.push({ invariant: 'I1', message: `${run.tool} ${run.callId} ran with ${run.unknownKeys.map((key) => `$.${key}`).join(', ')}, which its schema does not name: ${serialize(shown)} (effect ${run.effect}, target ${serialize(run.target)})` })
    // A middleware's rewrite comes after the approval, under the same permission (middleware.md).
    if (edits.length && !edit && !rewrite && !exact) {
      const [first] = edits
      violations.push({ invariant: 'I1', message: `${run.tool} ${run.callId}: the approver's edit ${serialize(first.value)} was accepted, but it ran with ${serialize(shown)} (${lostKeys(first.value!).map((key) => `$.${key}`).join(', ')} not as approved)` })
    }
    // In chat, the reply to an accepted edit says how the call runs: it must be how it ran.
    if (edit?.echo && !rewrite && !isDeepStrictEqual(edit.echo, shown)) {
      violations.push({ invariant: 'I1', message: `${run.tool} ${run.callId}: the chat's reply to the edit said it runs with ${serialize(edit.echo)}, but it ran with ${serialize(shown)}` })
    }
    const decided = exact || allowed.some((event) => sameAction(event) && (rewrite || (edit && event.phase === 'approve')))
    if (!decided) {
      violations.push({ invariant: 'I1', message: `${run.tool} ${run.callId} ran with ${serialize(shown)} (effect ${run.effect}, target ${serialize(run.target)}), which no allow decision covers; allow decisions of the call: ${serialize(allowed.map((event) => ({ phase: event.phase, effect: event.request.effect, target: event.request.permission.target, args: event.request.args })))}` })
    }
  }
  return violations
}

/**
 * I1, for the fs tools' previews: a `write` or `edit` a person was asked about writes only
 * over the file its preview showed them. A file a third party changed between the question
 * and the answer ends the call `STALE`; one written back to the very content shown does not.
 * An approver's edit that points the call at another path is not held to the first preview.
 */
export function checkWrittenAsPreviewed({ observations, changes }: RunOutcome): Violation[] {
  const violations: Violation[] = []
  for (const change of changes) {
    const questions = observations.asked.filter((request) => request.callId === change.callId && request.tool === change.tool && (request.args as { path?: unknown } | undefined)?.path === change.path)
    const shown = questions.map((request) => shownFile(request.preview, request.args)).filter((file) => file !== undefined)
    if (!shown.length || shown.some((file) => file === change.prior)) continue
    const describe = (file: (typeof shown)[number]) => file === 'refused' ? 'a refusal' : file === null ? 'no file (a creation)' : serialize(file)
    const tampered = observations.tampered.filter((item) => item.callId === change.callId && item.path === change.path).map((item) => item.kind)
    violations.push({ invariant: 'I1', message: `${change.tool} ${change.callId} wrote ${change.path} over ${change.prior === null ? 'no file' : serialize(change.prior)}, but the person was shown ${shown.map(describe).join(' or ')}${tampered.length ? ` (a third party's ${tampered.join(', ')} came between); it should have ended STALE` : ''}` })
  }
  return violations
}

/** I2: no secret value in anything a person, a log, an event, the audit log, a span or the model sees. */
export function checkSecrets({ scenario, observations }: RunOutcome): Violation[] {
  const secrets = new Set(serialize(scenario.calls).match(SECRET) ?? [])
  if (!secrets.size) return []
  const violations: Violation[] = []
  for (const [channel, text] of channelTexts(observations)) {
    for (const secret of secrets) {
      const at = text.indexOf(secret)
      if (at >= 0) violations.push({ invariant: 'I2', message: `${channel} shows the secret ${secret}: …${text.slice(Math.max(0, at - 80), at + secret.length + 20)}…` })
    }
  }
  return violations
}

/**
 * I3: nothing written outside the workspace or to a protected path. A bash command that ran
 * unsandboxed (sandbox off or unavailable) is the documented exception: nothing confines it,
 * so a run where one ran is not checked.
 */
export function checkWrites(outcome: RunOutcome): Violation[] {
  return [...checkRunWrites(outcome), ...checkUndo(outcome)]
}

function checkRunWrites({ before, after, runs }: RunOutcome): Violation[] {
  if (runs.some((run: RunRecord) => run.tool === 'bash' && run.sandboxed !== true)) return []
  return changedPaths(before, after)
    .filter((path) => !path.startsWith('ws/') || isProtected(path.slice(3)))
    .map((path) => ({ invariant: 'I3' as const, message: `${path} changed (${before.get(path) ?? 'absent'} → ${after.get(path) ?? 'absent'}): ${path.startsWith('ws/') ? 'a protected path' : 'outside the workspace'}, and no rule names it; what ran: ${serialize(runs.map((run) => ({ tool: run.tool, args: masked(run), sandboxed: run.sandboxed })))}` }))
}

/**
 * I3, for undo: undoing a change deletes or restores the file that change wrote and nothing
 * else — not a file a link at its path (or at a parent's) leads to, however alike they are.
 */
function checkUndo({ undo }: RunOutcome): Violation[] {
  if (!undo) return []
  const own = `ws/${undo.change.path}`
  return changedPaths(undo.before, undo.after).filter((path) => path !== own).map((path) => ({
    invariant: 'I3' as const,
    message: `the undo of ${undo.change.type === 'created' ? 'the creation of' : 'a change to'} ${undo.change.path}${undo.swapped ? ` (swapped for a link: ${undo.swapped})` : ''} changed ${path} (${undo.before.get(path) ?? 'absent'} → ${undo.after.get(path) ?? 'absent'}), which that change did not write; undo said: ${serialize(undo.outcomes.map(({ status, code, message }) => ({ status, code, message })))}`,
  }))
}

/** I4: every call ends with exactly one result, in order; nothing throws; no internal error. */
export function checkResults(outcome: RunOutcome): Violation[] {
  const { scenario, observations } = outcome
  const violations: Violation[] = []
  for (const error of observations.thrown) violations.push({ invariant: 'I4', message: `execute threw: ${error instanceof Error ? error.stack : serialize(error)}` })
  const { results, floodResults } = observations
  if (results.length !== scenario.calls.length) violations.push({ invariant: 'I4', message: `${scenario.calls.length} calls, ${results.length} results` })
  results.forEach((result, i) => {
    if (result.id !== scenario.calls[i]?.id) violations.push({ invariant: 'I4', message: `result #${i} is for call ${result.id}, not ${scenario.calls[i]?.id}` })
    if (!TOOL_STATUSES.includes(result.status)) violations.push({ invariant: 'I4', message: `result #${i} has status ${serialize(result.status)}` })
  })
  if (scenario.flood && floodResults.length !== scenario.flood) violations.push({ invariant: 'I4', message: `${scenario.flood} flood calls, ${floodResults.length} results` })
  if (outcome.undo?.error) violations.push({ invariant: 'I4', message: `undo threw: ${outcome.undo.error instanceof Error ? outcome.undo.error.stack : serialize(outcome.undo.error)}` })
  for (const error of observations.errors) violations.push({ invariant: 'I4', message: `internal/error: ${error instanceof Error ? error.stack : serialize(error)}` })
  for (const line of observations.logs.filter((item) => item.type === 'error')) violations.push({ invariant: 'I4', message: `an error was logged: ${line.text}` })
  return violations
}

/** I5: every authorized or asked call has exactly one audit record with its decision, whatever came after it. */
export function checkAudit({ observations }: RunOutcome): Violation[] {
  const violations: Violation[] = []
  const ids = new Set(observations.results.map((result) => result.id))
  for (const id of ids) {
    const decidedHere = observations.decisions.some((event) => event.request.callId === id)
    if (!decidedHere) continue
    // Calls of this id that reached a permission check (or a quota): an edited call is decided
    // twice, and a call cancelled before its check has no decision, so neither count alone says.
    const checks = observations.decisions.filter((event) => event.request.callId === id && (event.phase === 'authorize' || event.phase === 'quota')).length
    const expected = Math.min(checks, observations.results.filter((result) => result.id === id && !REFUSED_EARLY.has(result.code ?? '')).length)
    const records = observations.audit.filter((record) => record.callId === id && record.decided)
    if (records.length !== expected) {
      violations.push({ invariant: 'I5', message: `call id ${id}: ${expected} authorized or asked call(s), ${records.length} audit record(s) with a decision; records of that id: ${serialize(observations.audit.filter((record) => record.callId === id).map((record) => ({ tool: record.tool, outcome: record.outcome, decided: record.decided?.kind, ask: record.ask?.ended })))}; ${observations.audit.length} records in all` })
    }
    // A framework's user answers before the call is made; Dogu decides again as it is made,
    // and a grant the first answer made may allow the next call first (the answer is then
    // not used, and nothing was asked). What was asked is a framework answer Dogu took.
    const taken = observations.decisions.some((event) => event.request.callId === id && event.phase === 'approve' && event.source.kind === 'answer' && event.source.via === FRAMEWORK_VIA)
    const asked = taken || observations.approver.some((action) => action.callId === id && !action.framework)
    if (asked && !observations.audit.some((record) => record.callId === id && record.ask)) violations.push({ invariant: 'I5', message: `call id ${id} was asked, but no audit record of it says so` })
    if (taken && !observations.audit.some((record) => record.callId === id && record.ask?.via === FRAMEWORK_VIA)) violations.push({ invariant: 'I5', message: `call id ${id} was answered by the framework's user, but no audit record of it says via ${FRAMEWORK_VIA}: ${serialize(observations.audit.filter((record) => record.callId === id).map((record) => record.ask))}` })
  }
  return violations
}

/** I6: a denial, an expiry or a cancellation (while waiting for a person) runs nothing. */
export function checkNothingRanWhenRefused({ observations, runs }: RunOutcome): Violation[] {
  const violations: Violation[] = []
  const ids = new Set(observations.results.map((result) => result.id))
  for (const id of ids) {
    const asked = observations.approver.some((action) => action.callId === id)
    const mayHaveRun = observations.results.filter((result) => result.id === id && (['ok', 'error', 'timed_out'].includes(result.status) || (result.status === 'cancelled' && !asked))).length
    const ran = runs.filter((run) => run.callId === id).length
    if (ran > mayHaveRun) violations.push({ invariant: 'I6', message: `call id ${id} ran ${ran} time(s), but only ${mayHaveRun} of its results allow a run: ${serialize(observations.results.filter((result) => result.id === id).map((result) => ({ status: result.status, code: result.code, content: result.content })))}` })
  }
  return violations
}

export function checkInvariants(outcome: RunOutcome): Violation[] {
  return [checkWhatRan, checkWrittenAsPreviewed, checkSecrets, checkWrites, checkResults, checkAudit, checkNothingRanWhenRefused].flatMap((check) => check(outcome))
}
