import type { ActiveCall, CallHooks } from '../active-call'
import { permissionOf, requestFor } from '../call-request'
import { type Elicitation, type ElicitationSchema, type ElicitOptions, LOG_LEVELS, type LogLevel } from '../elicitation/elicitation'
import { elicitQuestion } from '../elicitation/elicit-question'
import type { ApprovalOutcome } from '../permission-gate'
import { enUS } from '../messages/en-us'
import { ToolDenial } from '../tool-denial'
import type { Denial } from '../types/denial'
import { outcomeDenial } from '../messages/denial-of'
import { normalizePreview, type ToolPreview } from '../tool-preview'
import { approval } from './approval'
import { abortedResult } from './call-results'
import type { PipelineShared } from './pipeline-host'
import type { RunStage } from './run-stage'
import type { SettleStage } from './settle-stage'

const LOG_LEVEL_SET: ReadonlySet<string> = new Set(LOG_LEVELS)

/**
 * What a running tool's `call` reports into the pipeline: progress and log lines (redacted),
 * a question to a person (`call.ask`, `call.elicit`), its abort and its deadline.
 */
export class ToolCallHooks implements CallHooks {
  constructor(private shared: PipelineShared, private run: RunStage, private settle: SettleStage) {}

  progress(call: ActiveCall, message: string): void {
    const { redactor, emit } = this.shared.host
    emit?.('tools/call-progress', call, redactor.active ? redactor.text(message) : message)
  }

  async ask(call: ActiveCall, reason: string, preview?: ToolPreview): Promise<void> {
    const gate = this.shared.host.permissions
    if (!gate) {
      const denial: Denial = { cause: 'no_service', asked: reason }
      throw new ToolDenial(enUS.denial(denial), denial)
    }
    // A tool asking from inside `run` wants a person's answer now, not a remembered one.
    const request = requestFor(call, permissionOf(call), 'always')
    const asked = Date.now()
    let outcome: ApprovalOutcome | undefined
    try {
      const shown = normalizePreview(preview)
      // `inRun`: the run this would continue cannot outlive the process, so it is never resumed after a restart.
      outcome = await approval(call, gate, { ...request, callId: call.id, reason, inRun: true, ...(shown ? { preview: shown } : {}) })
    } finally {
      call.waitedFor(asked)
    }
    if (outcome?.decision !== 'allow') {
      const denial = outcomeDenial(outcome)
      throw new ToolDenial(enUS.denial(denial), denial)
    }
  }

  log(call: ActiveCall, level: LogLevel, data: unknown): void {
    const { redactor, emit, logger } = this.shared.host
    if (!LOG_LEVEL_SET.has(level)) {
      logger.warn('tool %s logged at an unknown level %o; logged as "info" (levels: %s)', call.name, level, LOG_LEVELS.join(', '))
      level = 'info'
    }
    emit?.('tools/call-log', call, level, redactor.active ? redactor.value(data) : data)
  }

  async elicit(call: ActiveCall, form: ElicitationSchema, message: string, options?: ElicitOptions): Promise<Elicitation> {
    // A malformed form is the tool author's mistake: it throws, like a bad definition would.
    const question = elicitQuestion(form, message, options)
    const gate = this.shared.host.permissions
    if (!gate) return { action: 'cancel', reason: 'no permission service is loaded to ask anyone' }
    const request = requestFor(call, permissionOf(call), 'always')
    const asked = Date.now()
    let outcome: ApprovalOutcome
    try {
      const signal = options?.signal ? AbortSignal.any([call.signal, options.signal]) : call.signal
      const ask = () => gate.approve({ ...request, callId: call.id, reason: message, elicit: question }, signal)
      outcome = await (call.span ? call.span.child('dogu.elicitation', ask) : ask())
    } finally {
      call.waitedFor(asked)
    }
    if (outcome.decision === 'allow' && outcome.by) return { action: 'accept', value: outcome.value, by: outcome.by }
    if (outcome.by && !outcome.dismissed) return outcome.reason ? { action: 'decline', reason: outcome.reason, by: outcome.by } : { action: 'decline', by: outcome.by }
    const withdrawn = options?.signal?.aborted && !call.signal.aborted
    return { action: 'cancel', reason: withdrawn ? 'the question was withdrawn' : outcome.reason ?? 'nobody answered' }
  }

  aborted(call: ActiveCall): void {
    // Only a running handler needs settling here; earlier stages check `call.aborted`.
    if (call.runAt !== undefined && !call.settled) this.settle.settle(call, abortedResult(call))
  }

  expired(call: ActiveCall): void {
    this.run.expired(call)
  }
}
