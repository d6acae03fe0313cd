import { answerProblem, answerRefusal } from '../elicitation/elicit-question'
import type { ApprovalRequest, ElicitQuestion } from '../permission-gate'
import { inputQuestion } from './argument-edit'
import type { PermissionRequest } from './asker'
import { knownEffect } from './permission-modes'
import { approverPolicy, type DefaultApprovers, names as namesApprovers } from './rule-approvers'
import { summarizeArgs } from './summarize-args'

/**
 * The question askers are shown for an approval: the call, why a person is asked, what
 * asked, its preview, repair and edit form, and who may answer. Frozen.
 */
export function approvalQuestion(
  request: ApprovalRequest,
  why: string,
  asked: PermissionRequest['asked'],
  defaultApprovers: DefaultApprovers,
  timeout: number,
): PermissionRequest {
  const now = Date.now()
  const session = request.session
  return Object.freeze({
    ...shownCall(request),
    reason: why,
    ...(asked ? { asked } : {}),
    ...(request.preview ? { preview: request.preview } : {}),
    ...(request.repaired ? { repaired: Object.freeze({ ...request.repaired, steps: Object.freeze([...request.repaired.steps]) }) } : {}),
    ...(request.edit ? { input: inputQuestion(request.edit, request.args) } : {}),
    // The rule that asked decides who may answer, when it says; a tool's own ask has no rule.
    approvers: approverPolicy(session, asked?.kind === 'rule' ? asked.rule.approvers : undefined, defaultApprovers),
    // A rule naming its approvers is answered afresh each time: its answers count once.
    ...(request.confirm === 'always' || (asked?.kind === 'rule' && namesApprovers(asked.rule.approvers)) ? { confirm: 'always' as const } : {}),
    createdAt: now,
    expiresAt: now + timeout,
  })
}

/**
 * The question askers are shown for a tool's form (`call.elicit`): the call, the form with
 * its defaults, the engine's approvers; always answered afresh. Frozen.
 */
export function elicitationQuestion(
  request: ApprovalRequest,
  question: ElicitQuestion,
  defaultApprovers: DefaultApprovers,
  timeout: number,
): PermissionRequest {
  const now = Date.now()
  const defaults = question.validate({})
  return Object.freeze({
    ...shownCall(request),
    kind: 'elicitation' as const,
    reason: question.message,
    approvers: approverPolicy(request.session, undefined, defaultApprovers),
    input: Object.freeze({
      schema: question.schema,
      message: question.message,
      ...(defaults.ok ? { initial: defaults.value } : {}),
      requestedSchema: question.requestedSchema,
      check: (value: unknown) => answerProblem(question, value),
      // The values as the tool gets them (its defaults filled in), or why the form refuses them.
      resolve: (value: unknown) => {
        const refused = answerRefusal(question, value)
        if (refused) return refused
        const result = question.validate(value)
        return { args: result.ok ? result.value : value, changes: [] }
      },
    }),
    confirm: 'always' as const,
    createdAt: now,
    expiresAt: now + timeout,
  })
}

/** What every question shows of the call it is about: a fresh id, the call, its session, tool, permission and arguments. */
function shownCall(request: ApprovalRequest) {
  return {
    id: `perm_${globalThis.crypto.randomUUID()}`,
    callId: request.callId ?? '',
    session: Object.freeze({ ...request.session }),
    tool: request.tool,
    permission: Object.freeze({ ...request.permission }),
    effect: knownEffect(request.effect),
    // What the call acts on is part of what a person approves: the target, when there is one.
    summary: summarizeArgs(request.tool, request.args, request.permission.target === undefined ? undefined : request.permission),
    // As given: the pipeline has masked secret fields already (`CallInfo.args`).
    ...(request.args !== undefined ? { args: request.args } : {}),
  }
}
