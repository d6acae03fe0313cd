import type { ActiveCall } from '../active-call'
import { messageOf } from '../error-message'
import type { Logger } from '../logger'
import type { ApprovalOutcome, ApprovalRequest, Decision, PermissionGate } from '../permission-gate'
import { normalizePreview, PREVIEW_TIMEOUT, type ToolPreview } from '../tool-preview'

/** The decisions a gate may answer with; anything else is refused as no decision. */
export const DECISIONS: ReadonlySet<unknown> = new Set<Decision>(['allow', 'ask', 'deny'])

/** A person's approval, in its own span when the call is traced. */
export function approval(call: ActiveCall, gate: PermissionGate, request: ApprovalRequest): Promise<ApprovalOutcome> {
  const span = call.span
  if (!span) return gate.approve(request, call.signal)
  return span.child('dogu.approval', () => gate.approve(request, call.signal)).then((outcome) => {
    span.decided('ask', sourceKind(outcome?.rule))
    return outcome
  })
}

/** The kind of what decided (`DecisionSource.kind`), for telemetry; a foreign gate's rule may have none. */
export function sourceKind(rule: unknown): string | undefined {
  const kind = (rule as { kind?: unknown } | undefined)?.kind
  return typeof kind === 'string' ? kind : undefined
}

/**
 * The tool's preview of this call, bounded, or a line saying why there is none: the person
 * asked is never left without knowing that the tool meant to show something.
 */
export async function previewOf(call: ActiveCall, logger: Logger): Promise<Readonly<ToolPreview> | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined
  let onAbort: (() => void) | undefined
  const late = Symbol('late')
  try {
    // Bounded by the preview timeout and by the call: a hung preview never holds the question.
    const stopped = new Promise<typeof late>((resolve) => {
      timer = setTimeout(() => resolve(late), PREVIEW_TIMEOUT)
      onAbort = () => resolve(late)
      call.signal.addEventListener('abort', onAbort, { once: true })
    })
    const shown = await Promise.race([Promise.resolve().then(() => call.tool.preview!(call.input as any, call)), stopped])
    if (shown === late) return call.aborted ? undefined : { text: `(no preview: the tool's preview took over ${PREVIEW_TIMEOUT / 1000} s)` }
    return normalizePreview(shown)
  } catch (error) {
    logger.warn('the preview of tool %s failed: %s', call.name, messageOf(error))
    return { text: `(no preview: ${messageOf(error)})` }
  } finally {
    clearTimeout(timer)
    call.signal.removeEventListener('abort', onAbort!)
  }
}
