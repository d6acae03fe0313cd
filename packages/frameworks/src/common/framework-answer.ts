import type { Approver, AskAnswer, AskScope, Session } from '@dogu/core'

/** Who answers a framework's approval request, and for how long its yes holds. */
export interface FrameworkApprover {
  /**
   * Who answered, as the audit log and grants name them. @default the session's `userId`
   * (the caller may approve their own calls, unless a rule names other approvers)
   */
  by?: string | Approver
  /** `session` or `always` also remember the yes as a grant. @default 'once' */
  scope?: AskScope
}

/**
 * The framework user's answer as Dogu's: what `execute({ answers })` takes for the call's
 * question. `via` names the framework in the audit record (`ai-sdk`, `openai-agents`, `langchain`).
 */
export function frameworkAnswer(session: Session, approved: boolean, via: string, approver: FrameworkApprover = {}, reason?: string): AskAnswer {
  const by = approver.by ?? session.userId ?? 'user'
  if (!approved) return reason ? { decision: 'deny', by, via, reason } : { decision: 'deny', by, via }
  return { decision: 'allow', by, via, scope: approver.scope ?? 'once' }
}
