import type { ActiveCall } from './active-call'
import { messageOf } from './error-message'
import { permissionOf, requestFor } from './call-request'
import { jsonChanges } from './json-changes'
import type { ArgumentEditor, RevisedCall } from './permission-gate'
import { maskSecrets, restoreSecrets } from './secret-fields'
import { formatMaskedIssues } from './secret-issues'
import type { PermissionSpec } from './tool'
import { describeUnknownEditKey, findUnknownEditKey } from './unknown-edit-key'

/**
 * What lets an approver edit a call's arguments before approving it: the edited arguments
 * go through what the model's went through (the tool's validator, its `permission()`), so
 * an edit can never run what the model could not have asked for. An edit may set only the
 * fields the schema names (`findUnknownEditKey`): schemastery would keep a misspelled key,
 * and the call would run with the field the person meant to change unchanged. `undefined`
 * for a tool without fields to edit. Each edited call it returns is remembered: the pipeline
 * runs only an edit its own editor produced, whatever a gate hands back.
 */
export function editorFor(call: ActiveCall, maxArgumentsLength: number, produced: WeakSet<RevisedCall>): ArgumentEditor | undefined {
  const schema = call.tool.args
  if (schema.type !== 'object' || !Object.keys(schema.dict ?? {}).length) return undefined
  return {
    schema,
    revise(value) {
      const unknown = value && typeof value === 'object' ? findUnknownEditKey(schema, value, call.args) : undefined
      if (unknown) return { error: describeUnknownEditKey(unknown) }
      const checked = checkRevision(call, value, maxArgumentsLength)
      if ('problem' in checked) {
        switch (checked.problem) {
          case 'not-object': return { error: 'the edited arguments must be a JSON object' }
          case 'not-json': return { error: `the edited arguments are not JSON: ${checked.detail}` }
          case 'too-long': return { error: `the edited arguments are ${checked.detail}` }
          case 'invalid': return { error: checked.detail }
          case 'permission': return { error: `the edited call's permission could not be worked out: ${checked.detail}` }
        }
      }
      const { input, args, permission } = checked
      const changes = jsonChanges(call.args, args)
      // A secret changes under its mask: say that it did, never what it is.
      if (!changes.length && call.args !== call.input && JSON.stringify(input) !== JSON.stringify(call.input)) changes.push('a secret field was changed (its value is not shown)')
      const revised: RevisedCall = { input, changes, request: requestFor(call, permission, call.tool.confirm, args) }
      produced.add(revised)
      return revised
    },
  }
}

/** Arguments a person or a middleware put in place of the call's, checked as the model's were. */
export type CheckedRevision =
  | { input: unknown; args: unknown; permission: PermissionSpec; json: string }
  | { problem: 'not-object' | 'not-json' | 'too-long' | 'invalid' | 'permission'; detail: string }

/**
 * Checks new arguments for a call as the model's went through the pipeline: a JSON object
 * within `maxArgumentsLength`, the tool's validator (secret fields left as `••••` keep their
 * value), and the tool's `permission()` of them. `input` is what `run` would receive,
 * `args` the same with secrets masked. Shared by an approver's edit and a middleware's rewrite.
 */
export function checkRevision(call: ActiveCall, value: unknown, maxArgumentsLength: number): CheckedRevision {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { problem: 'not-object', detail: '' }
  let json: string
  try {
    json = JSON.stringify(value)
  } catch (error) {
    return { problem: 'not-json', detail: messageOf(error) }
  }
  if (json.length > maxArgumentsLength) return { problem: 'too-long', detail: `${json.length} characters long; the limit is ${maxArgumentsLength}` }
  const restored = restoreSecrets(value, call.input, call.entry.secrets)
  const checked = call.entry.validator(restored)
  // Said to the person, logged: the secrets kept under their mask, or typed anew, are not quoted.
  if (!checked.ok) return { problem: 'invalid', detail: formatMaskedIssues(checked.issues, restored, call.entry.secrets) }
  let permission: PermissionSpec
  try {
    permission = permissionOf(call, checked.value)
  } catch (error) {
    return { problem: 'permission', detail: messageOf(error) }
  }
  return { input: checked.value, args: maskSecrets(checked.value, call.entry.secrets), permission, json }
}

/**
 * The line a model reads before the result of a call a person edited, so it does not take
 * the result for its own call's: what changed, path by path (`jsonChanges`). An edit that
 * changes nothing is a plain approval, so there is always a change to name.
 */
export function editNote(changes: readonly string[]): string {
  return `A person changed your arguments before approving this call; it ran with these changes:\n${changes.join('\n')}`
}
