import type { ApprovalRequest, ArgumentEditor, AuthorizeRequest, AuthorizeResult } from '../permission-gate'
import type { Approver, InputQuestion, PermissionRequest } from './asker'
import { describeApprovers, mayAnswer } from './may-answer'
import type { EditVerdict } from './pending-approval'
import { approverPolicy, type DefaultApprovers, names as namesApprovers } from './rule-approvers'
import { messageOf } from '../error-message'
import { ruleDenial } from '../messages/denial-of'
import { enUS } from '../messages/en-us'
import type { RevisionRefusal } from '../result-params'

/** The edit part of a pipeline's question: the tool's schema, filled with the call's (masked) arguments. */
export function inputQuestion(edit: ArgumentEditor, args: unknown): Readonly<InputQuestion> {
  return Object.freeze({
    schema: edit.schema,
    message: 'Edit the arguments before approving: the edited call is checked and authorized again.',
    initial: args,
    check(value: unknown) {
      const revised = reviseSafely(edit, value)
      return 'error' in revised ? revised.error : undefined
    },
    resolve(value: unknown) {
      const revised = reviseSafely(edit, value)
      if ('error' in revised) return revised.refusal ? { error: revised.error, refusal: revised.refusal } : { error: revised.error }
      return { args: revised.request.args, changes: revised.changes }
    },
  })
}

/**
 * What an approver's edited arguments come to: they are validated (the pipeline's
 * `edit.revise`), then decided again as a new request from the same caller, whose
 * approvers must include this person when the edited call is asked. Synchronous, so the
 * answer is accepted or refused at once.
 */
export function reviseEdit(
  input: ApprovalRequest,
  value: unknown,
  by: Approver,
  decide: (request: AuthorizeRequest) => AuthorizeResult,
  defaultApprovers: DefaultApprovers,
): EditVerdict {
  const edit = input.edit
  if (!edit) return refusedEdit('invalid', { kind: 'not_editable' })
  const revised = reviseSafely(edit, value)
  if ('error' in revised) return revised.refusal ? { refused: 'invalid', why: revised.error, refusal: revised.refusal } : { refused: 'invalid', why: revised.error }
  const result = decide(revised.request)
  if (result.decision === 'deny') {
    const denial = ruleDenial(result.reason, result.cause)
    return { revised, decision: 'deny', reason: enUS.denial(denial), denial }
  }
  let once = revised.request.confirm === 'always'
  if (result.decision === 'ask') {
    // The edited call may fall under another rule: its approvers must include this person.
    const asked = result.rule as PermissionRequest['asked']
    const approvers = asked?.kind === 'rule' ? asked.rule.approvers : undefined
    const policy = approverPolicy(input.session, approvers, defaultApprovers)
    if (!mayAnswer(policy, by)) return refusedEdit('not-allowed', { kind: 'needs_approver', approvers: describeApprovers(policy) })
    if (namesApprovers(approvers)) once = true
  }
  return { revised, decision: 'allow', once }
}

/** `edit.revise(value)`, with a throw (a tool's `permission()` failing) as the edit's error. */
function reviseSafely(edit: ArgumentEditor, value: unknown): ReturnType<ArgumentEditor['revise']> {
  try {
    return edit.revise(value)
  } catch (error) {
    const refusal: RevisionRefusal = { kind: 'check_failed', error: messageOf(error) }
    return { error: enUS.revision(refusal, 'edit'), refusal }
  }
}

function refusedEdit(refused: 'invalid' | 'not-allowed', refusal: RevisionRefusal): EditVerdict {
  return { refused, why: enUS.revision(refusal, 'edit'), refusal }
}
