import type { ActiveCall } from '../active-call'
import { requestFor } from '../call-request'
import { messageOf } from '../error-message'
import type { RegisteredMiddleware } from '../middleware/middleware-stack'
import type { ApprovalOutcome } from '../permission-gate'
import type { PermissionSpec } from '../tool'
import type { ToolResult } from '../tool-result'
import { approval, DECISIONS, previewOf, sourceKind } from './approval'
import type { Denial } from '../types/denial'
import { abortedResult, deniedResult } from './call-results'
import { outcomeDenial, ruleDenial } from '../messages/denial-of'
import type { PipelineHost } from './pipeline-host'

/**
 * A middleware's rewrite changed the call's permission or target: a new request, which may
 * ask (with the tool's preview) or be denied. `undefined` when the rewritten call may run.
 */
export async function reauthorize(host: PipelineHost, call: ActiveCall, by: RegisteredMiddleware, permission: PermissionSpec): Promise<ToolResult | undefined> {
  const denied = (denial: Denial) => deniedResult(call, { cause: 'rewrite_denied', middleware: by.name, ...(by.plugin ? { plugin: by.plugin } : {}), denial })
  const gate = host.permissions
  const effect = permission.effect ?? call.tool.traits.effect
  if (!gate) return effect === 'read' ? undefined : denied({ cause: 'no_service', effect })
  const request = requestFor(call, permission, call.tool.confirm)
  try {
    const answer = await gate.authorize(request)
    if (call.aborted) return abortedResult(call)
    const decision = answer?.decision
    if (!DECISIONS.has(decision)) return denied({ cause: 'no_decision', got: JSON.stringify(decision) ?? 'undefined' })
    call.span?.decided(decision, sourceKind(answer.rule))
    if (decision === 'deny') return denied(ruleDenial(answer.reason, answer.cause))
    if (decision === 'allow') return undefined
    const asked = Date.now()
    let outcome: ApprovalOutcome | undefined
    try {
      const preview = call.tool.preview ? await previewOf(call, host.logger) : undefined
      if (call.aborted) return abortedResult(call)
      outcome = await approval(call, gate, { ...request, callId: call.id, reason: permission.reason, ...(preview ? { preview } : {}) })
    } finally {
      call.waitedFor(asked)
    }
    if (call.aborted) return abortedResult(call)
    return outcome?.decision === 'allow' ? undefined : denied(outcomeDenial(outcome))
  } catch (error) {
    if (call.aborted) return abortedResult(call)
    return denied({ cause: 'check_failed', error: messageOf(error) })
  }
}
