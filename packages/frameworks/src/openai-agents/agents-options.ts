import type { Toolset } from '@dogu/core'
import type { RunContext } from '@openai/agents'
import type { FrameworkApprover } from '../common/framework-answer'
import { SessionToolsets } from '../common/session-toolsets'

/** How `agentsTools` and `agentsRejectionFormatter` key a run to Dogu and name who approves. */
export interface AgentsToolsOptions<TContext = unknown> {
  /**
   * Who approves through the SDK's interruptions (`state.approve(item)`) and for how long
   * the yes holds; a function is asked per call. `state.approve(item, { alwaysApprove: true })`
   * widens a `once` to `session` (the SDK's "for the rest of this run" is kept by Dogu for
   * the run's session); a wider scope given here is kept as given.
   * @default { by: the session's userId, scope: 'once' }
   */
  approver?: FrameworkApprover | ((callId: string, runContext: RunContext<TContext>) => FrameworkApprover)
  /**
   * The Dogu session id of a run. The SDK gives a tool no session or conversation id, only the
   * run's context, which a `RunState` keeps across a restart.
   * `undefined` means the toolset's own session.
   * @default (runContext) => runContext.context?.sessionId, when that is a string
   */
  session?: (runContext: RunContext<TContext>) => string | undefined
}

/** The toolset of a run's session, and who answers its questions. */
export class AgentsRuns<TContext> {
  private toolsets: SessionToolsets

  constructor(toolset: Toolset, private options: AgentsToolsOptions<TContext>) {
    this.toolsets = new SessionToolsets(toolset)
  }

  toolsetOf(runContext: RunContext<TContext>): Toolset {
    return this.toolsets.get((this.options.session ?? contextSessionId)(runContext))
  }

  approverOf(callId: string, runContext: RunContext<TContext>): FrameworkApprover {
    const { approver } = this.options
    return (typeof approver === 'function' ? approver(callId, runContext) : approver) ?? {}
  }
}

/** The default session: `context.sessionId` of the run, when the app put one there. */
function contextSessionId(runContext: RunContext<unknown>): string | undefined {
  const context = runContext?.context as { sessionId?: unknown } | null | undefined
  return context && typeof context === 'object' && typeof context.sessionId === 'string' ? context.sessionId : undefined
}
