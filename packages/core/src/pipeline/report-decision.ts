import type { ActiveCall } from '../active-call'
import { requestFor } from '../call-request'
import { messageOf } from '../error-message'
import type { PipelineDecision } from '../permission-gate'
import type { PipelineHost } from './pipeline-host'

/** A denial made on the pipeline (a middleware, a quota), reported through the gate: the decision event, the audit log. */
export function reportDecision(host: PipelineHost, call: ActiveCall, reason: string, source: PipelineDecision['source']): void {
  const gate = host.permissions
  if (!gate?.reportDecision) return
  try {
    const request = requestFor(call, call.permission ?? call.entry.defaultPermission, call.tool.confirm)
    gate.reportDecision({ request, decision: 'deny', reason, source })
  } catch (error) {
    host.logger.warn('reporting the denial of %s by %s "%s" failed: %s', call.name, source.kind, source.name, messageOf(error))
  }
}
