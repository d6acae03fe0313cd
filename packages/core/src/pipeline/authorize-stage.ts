import type { ActiveCall } from '../active-call'
import { editorFor } from '../argument-editor'
import { permissionOf, requestFor } from '../call-request'
import { messageOf } from '../error-message'
import type { ApprovalOutcome, AuthorizeRequest, AuthorizeResult, PermissionGate, RevisedCall } from '../permission-gate'
import type { PermissionSpec } from '../tool'
import type { ToolResult } from '../tool-result'
import { approval, DECISIONS, previewOf, sourceKind } from './approval'
import { abortedResult, codedResult, deniedResult } from './call-results'
import { outcomeDenial, ruleDenial } from '../messages/denial-of'
import type { LimitsStage } from './limits-stage'
import type { PipelineShared } from './pipeline-host'
import { coversPermission, permissionOnly, takePreApproval } from './pre-approval'
import { isPromise, type Stage, type Step } from './stage'

/** Edited calls the pipeline's editors validated (`editorFor`); only these may run. */
const validatedEdits = new WeakSet<RevisedCall>()

/**
 * Authorize: the call's permission, decided by the permission service (or, without one,
 * only read-only tools run). A plain `allow` passes at once, synchronously; an answer that
 * comes later, an ask (with the tool's preview and an editor for its arguments) or a denial
 * goes through `slowly`. A call over its quota is refused before anyone is asked, so this
 * stage takes the limits stage's quota units itself when it waited.
 */
export class AuthorizeStage implements Stage {
  constructor(private shared: PipelineShared, private limits: LimitsStage) {}

  enter(call: ActiveCall): Step<ToolResult | undefined> {
    let permission: PermissionSpec
    try {
      permission = permissionOf(call)
    } catch (error) {
      return codedResult(call, 'error', 'tool_error', { message: messageOf(error) })
    }
    call.permission = permission
    // An answer given after a restart: decided by the engine as it came, so no one is asked again.
    if (call.resumes) {
      const approved = takePreApproval(call)
      if (approved) return this.preApproved(call, permission, approved)
    }
    const gate = this.shared.host.permissions
    if (!gate) {
      const effect = permission.effect ?? call.tool.traits.effect
      if (effect === 'read') return undefined
      return codedResult(call, 'denied', 'no_permission_service', { tool: call.name, effect })
    }
    const request = requestFor(call, permission, call.tool.confirm)
    // A person's no, brought by the caller's framework, is final whatever the rules say now.
    if (call.answer?.decision === 'deny') return this.declined(call, gate, request)
    let result: AuthorizeResult | Promise<AuthorizeResult>
    try {
      result = gate.authorize(request)
    } catch (error) {
      return deniedResult(call, { cause: 'check_failed', error: messageOf(error) })
    }
    // Any answer but a plain `allow`, even `undefined` from a faulty gate, goes to the slow path that checks it.
    if (result && !isPromise(result) && result.decision === 'allow') {
      call.span?.decided('allow', sourceKind(result.rule))
      return undefined
    }
    return this.slowly(call, gate, request, result)
  }

  /**
   * A call approved before it was prepared (`preApprove`): it runs only while it needs what
   * was approved. A tool whose `permission()` now says otherwise (it was updated meanwhile)
   * is denied rather than asked again: no one waits for that question.
   */
  private preApproved(call: ActiveCall, permission: PermissionSpec, approved: Readonly<PermissionSpec>): ToolResult | undefined {
    if (coversPermission(approved, permission, call.tool.traits.effect)) {
      call.span?.decided('allow', 'answer')
      return undefined
    }
    return deniedResult(call, { cause: 'approval_changed', approved: permissionOnly(approved), needs: permissionOnly(permission) })
  }

  /** An asynchronous answer, an ask or a denial. */
  private async slowly(call: ActiveCall, gate: PermissionGate, request: AuthorizeRequest, pending: AuthorizeResult | Promise<AuthorizeResult>): Promise<ToolResult | undefined> {
    call.waited = true
    try {
      const answer = await pending
      if (call.aborted) return abortedResult(call)
      const decision = answer?.decision
      if (!DECISIONS.has(decision)) return deniedResult(call, { cause: 'no_decision', got: JSON.stringify(decision) ?? 'undefined' })
      call.span?.decided(decision, sourceKind(answer.rule))
      // A call over its quota is refused before anyone is asked to approve it.
      if (decision !== 'deny') {
        const refused = await this.limits.takeQuota(call)
        if (refused) return refused
        if (call.aborted) return abortedResult(call)
      }
      if (decision === 'deny') return deniedResult(call, ruleDenial(answer.reason, answer.cause))
      if (decision === 'ask') return await this.ask(call, gate, request)
    } catch (error) {
      if (call.aborted) return abortedResult(call)
      return deniedResult(call, { cause: 'check_failed', error: messageOf(error) })
    }
    return undefined
  }

  /**
   * A call its caller's framework user declined (`ExecuteOptions.answers`): put to the gate
   * as a question, which the engine answers with that no at once (audited as the answer).
   * No quota is taken: it never runs.
   */
  private async declined(call: ActiveCall, gate: PermissionGate, request: AuthorizeRequest): Promise<ToolResult | undefined> {
    call.waited = true
    try {
      return await this.ask(call, gate, request)
    } catch (error) {
      return deniedResult(call, { cause: 'check_failed', error: messageOf(error) })
    }
  }

  /** The question put to a person: the tool's preview, an editor for its arguments, the repair if any. */
  private async ask(call: ActiveCall, gate: PermissionGate, request: AuthorizeRequest): Promise<ToolResult | undefined> {
    const asked = Date.now()
    let outcome: ApprovalOutcome | undefined
    try {
      const preview = call.tool.preview ? await previewOf(call, this.shared.host.logger) : undefined
      if (call.aborted) return abortedResult(call)
      const edit = editorFor(call, this.shared.limits.maxArgumentsLength, validatedEdits)
      outcome = await approval(call, gate, { ...request, callId: call.id, reason: request.permission.reason, ...(preview ? { preview } : {}), ...(edit ? { edit } : {}), ...(call.repaired ? { repaired: call.repaired } : {}), ...(call.answer ? { answer: call.answer } : {}) })
    } finally {
      call.waitedFor(asked)
    }
    // A request dropped because the call was cancelled ends `cancelled`, not `denied`.
    if (call.aborted) return abortedResult(call)
    const edited = outcome?.edited
    if (edited) {
      // Only an edit this call's editor validated runs, whatever the gate hands back.
      if (!validatedEdits.has(edited)) return deniedResult(call, { cause: 'unvalidated_edit' })
      call.revise(edited.input, edited.request.args, edited.changes)
    }
    if (outcome?.decision !== 'allow') return deniedResult(call, outcomeDenial(outcome))
    return undefined
  }
}
