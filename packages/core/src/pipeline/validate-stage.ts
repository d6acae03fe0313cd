import { ActiveCall, type CallHooks } from '../active-call'
import type { ResumedFrom } from '../events'
import type { PermissionGate } from '../permission-gate'
import { isPermissionMode, type PermissionMode } from '../permissions/permission-modes'
import { maskedProblems } from '../secret-issues'
import type { Session } from '../session'
import { telemetry } from '../telemetry/call-telemetry'
import type { ToolResult } from '../tool-result'
import type { ParsedCall } from './parse-stage'
import type { PipelineShared } from './pipeline-host'
import type { SettleStage } from './settle-stage'

/**
 * Validate: the tool's schema checks the parsed arguments (defaults filled in), and the call
 * becomes an `ActiveCall`, traced and announced (`tools/call-start`). Ends it with an
 * `invalid_arguments` result, secret fields' values unquoted, when the schema refuses.
 */
export class ValidateStage {
  constructor(private shared: PipelineShared, private settle: SettleStage, private hooks: CallHooks) {}

  /** `resumes`: the ask a call run after a restart answers, set before the call is announced. */
  enter(parsed: ParsedCall, resumes?: ResumedFrom): ActiveCall | ToolResult {
    const { id, entry, value, repaired } = parsed
    const checked = entry.validator(value)
    if (!checked.ok) return this.settle.reject(id, entry.tool.name, 'invalid_arguments', { kind: 'validation', problems: maskedProblems(checked.issues, value, entry.secrets) }, entry, repaired)
    const { host, session } = this.shared
    const call = new ActiveCall(id, entry, session, checked.value, this.hooks, modeFor(host.permissions, session))
    if (repaired) call.repaired = repaired
    if (resumes) call.resumes = resumes
    if (telemetry) {
      const span = telemetry.start(call)
      if (span) call.span = span
    }
    host.emit?.('tools/call-start', call)
    return call
  }

  /**
   * The call as it would run, or undefined when the schema refuses it: not traced, not
   * announced, never run (`CallPipeline.decide`).
   */
  probe(parsed: ParsedCall): ActiveCall | undefined {
    const checked = parsed.entry.validator(parsed.value)
    if (!checked.ok) return undefined
    const { host, session } = this.shared
    return new ActiveCall(parsed.id, parsed.entry, session, checked.value, this.hooks, modeFor(host.permissions, session))
  }
}

/**
 * The mode a call runs under, read once as it is prepared so `permission()` and `run()`
 * agree even if the session's mode changes while the call waits. A map lookup, no
 * allocation. Without a gate, or a gate without `modeOf`, it is `default`; so is an answer
 * that is not a mode or a `modeOf` that throws (the gate still decides the call itself).
 */
function modeFor(gate: PermissionGate | undefined, session: Session): PermissionMode {
  if (!gate?.modeOf) return 'default'
  try {
    const mode = gate.modeOf(session.id)
    return isPermissionMode(mode) ? mode : 'default'
  } catch {
    return 'default'
  }
}
