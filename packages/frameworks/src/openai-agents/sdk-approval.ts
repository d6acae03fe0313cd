import type { AskAnswer, Session } from '@dogu/core'
import type { RunContext } from '@openai/agents'
import { type FrameworkApprover, frameworkAnswer } from '../common/framework-answer'

/** How the framework names itself in the audit record's `ask.via`. */
export const AGENTS_VIA = 'openai-agents'

/**
 * A call id no model sends. The SDK answers for it only when the tool as a whole was
 * approved for the run (`alwaysApprove`), which is how that is told apart from one call's yes.
 */
const ANY_CALL = '\u0000dogu:any-call'

/**
 * The answer the SDK's user gave to this call's interruption, as Dogu's: `undefined` when
 * nobody approved it in the SDK (its `needsApproval` was false, so Dogu's rules decide).
 * `alwaysApprove` turns a `once` into `session`.
 */
export function sdkAnswer(runContext: RunContext<any>, toolName: string, callId: string, session: Session, approver: FrameworkApprover): AskAnswer | undefined {
  if (runContext.isToolApproved({ toolName, callId }) !== true) return undefined
  const forTheRun = runContext.isToolApproved({ toolName, callId: ANY_CALL }) === true
  const scope = forTheRun && (approver.scope ?? 'once') === 'once' ? 'session' : approver.scope
  return frameworkAnswer(session, true, AGENTS_VIA, scope ? { ...approver, scope } : approver)
}
