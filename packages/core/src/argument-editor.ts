import { formatIssues } from '@dogu/schema'
import type { ActiveCall } from './active-call'
import { messageOf } from './error-message'
import { permissionOf, requestFor } from './call-request'
import { jsonChanges } from './json-changes'
import type { ArgumentEditor, RevisedCall } from './permission-gate'
import { maskSecrets, restoreSecrets } from './secret-fields'
import type { PermissionSpec } from './tool'

/**
 * What lets an approver edit a call's arguments before approving it: the edited arguments
 * go through what the model's went through (the tool's validator, its `permission()`), so
 * an edit can never run what the model could not have asked for. `undefined` for a tool
 * without fields to edit. Each edited call it returns is remembered: the pipeline runs only
 * an edit its own editor produced, whatever a gate hands back.
 */
export function editorFor(call: ActiveCall, maxArgumentsLength: number, produced: WeakSet<RevisedCall>): ArgumentEditor | undefined {
  const schema = call.tool.args
  if (schema.type !== 'object' || !Object.keys(schema.dict ?? {}).length) return undefined
  return {
    schema,
    revise(value) {
      if (!value || typeof value !== 'object' || Array.isArray(value)) return { error: 'the edited arguments must be a JSON object' }
      let length: number
      try {
        length = JSON.stringify(value).length
      } catch (error) {
        return { error: `the edited arguments are not JSON: ${messageOf(error)}` }
      }
      if (length > maxArgumentsLength) return { error: `the edited arguments are ${length} characters long; the limit is ${maxArgumentsLength}` }
      const checked = call.entry.validator(restoreSecrets(value, call.input, call.entry.secrets))
      if (!checked.ok) return { error: formatIssues(checked.issues) }
      let permission: PermissionSpec
      try {
        permission = permissionOf(call, checked.value)
      } catch (error) {
        return { error: `the edited call's permission could not be worked out: ${messageOf(error)}` }
      }
      const args = maskSecrets(checked.value, call.entry.secrets)
      const changes = jsonChanges(call.args, args)
      // A secret changes under its mask: say that it did, never what it is.
      if (!changes.length && call.args !== call.input && JSON.stringify(checked.value) !== JSON.stringify(call.input)) changes.push('a secret field was changed (its value is not shown)')
      const revised: RevisedCall = { input: checked.value, changes, request: requestFor(call, permission, call.tool.confirm, args) }
      produced.add(revised)
      return revised
    },
  }
}

/**
 * The line a model reads before the result of a call a person edited, so it does not take
 * the result for its own call's: what changed, path by path (`jsonChanges`). An edit that
 * changes nothing is a plain approval, so there is always a change to name.
 */
export function editNote(changes: readonly string[]): string {
  return `A person changed your arguments before approving this call; it ran with these changes:\n${changes.join('\n')}`
}
