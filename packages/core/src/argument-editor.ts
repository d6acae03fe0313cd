import type { ActiveCall } from './active-call'
import { messageOf } from './error-message'
import { permissionOf, requestFor } from './call-request'
import { jsonChanges } from './json-changes'
import type { ArgumentEditor, RevisedCall } from './permission-gate'
import { maskSecrets, restoreSecrets } from './secret-fields'
import { enUS } from './messages/en-us'
import { SECRET_CHANGED } from './messages/edit-lines'
import type { RevisionRefusal } from './result-params'
import { maskedProblems } from './secret-issues'
import type { PermissionSpec } from './tool'
import { findUnknownEditKey, unknownEditKeyRefusal } from './unknown-edit-key'

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
      if (unknown) return refused(unknownEditKeyRefusal(unknown))
      const checked = checkRevision(call, value, maxArgumentsLength)
      if ('refusal' in checked) return refused(checked.refusal)
      const { input, args, permission } = checked
      const changes = jsonChanges(call.args, args)
      // A secret changes under its mask: say that it did, never what it is.
      if (!changes.length && call.args !== call.input && JSON.stringify(input) !== JSON.stringify(call.input)) changes.push(SECRET_CHANGED)
      const revised: RevisedCall = { input, changes, request: requestFor(call, permission, call.tool.confirm, args) }
      produced.add(revised)
      return revised
    },
  }
}

/** An edit refused: why, in the model's English, and in its structured form. */
function refused(refusal: RevisionRefusal): { error: string; refusal: RevisionRefusal } {
  return { error: enUS.revision(refusal, 'edit'), refusal }
}

/** Arguments a person or a middleware put in place of the call's, checked as the model's were. */
export type CheckedRevision =
  | { input: unknown; args: unknown; permission: PermissionSpec; json: string }
  | { refusal: RevisionRefusal }

/**
 * Checks new arguments for a call as the model's went through the pipeline: a JSON object
 * within `maxArgumentsLength`, the tool's validator (secret fields left as `••••` keep their
 * value), and the tool's `permission()` of them. `input` is what `run` would receive,
 * `args` the same with secrets masked. Shared by an approver's edit and a middleware's rewrite.
 */
export function checkRevision(call: ActiveCall, value: unknown, maxArgumentsLength: number): CheckedRevision {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { refusal: { kind: 'not_object' } }
  let json: string
  try {
    json = JSON.stringify(value)
  } catch (error) {
    return { refusal: { kind: 'not_json', detail: messageOf(error) } }
  }
  if (json.length > maxArgumentsLength) return { refusal: { kind: 'too_large', length: json.length, max: maxArgumentsLength } }
  const restored = restoreSecrets(value, call.input, call.entry.secrets)
  const checked = call.entry.validator(restored)
  // Said to the person, logged: the secrets kept under their mask, or typed anew, are not quoted.
  if (!checked.ok) return { refusal: { kind: 'validation', problems: maskedProblems(checked.issues, restored, call.entry.secrets) } }
  let permission: PermissionSpec
  try {
    permission = permissionOf(call, checked.value)
  } catch (error) {
    return { refusal: { kind: 'permission', error: messageOf(error) } }
  }
  return { input: checked.value, args: maskSecrets(checked.value, call.entry.secrets), permission, json }
}

