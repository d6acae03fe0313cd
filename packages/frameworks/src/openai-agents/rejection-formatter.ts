import { describeResult, type Toolset, type ToolResult } from '@dogu/core'
import type { ToolErrorFormatter } from '@openai/agents'
import { AgentsRuns, type AgentsToolsOptions } from './agents-options'
import { frameworkAnswer } from '../shared/framework-answer'
import { AGENTS_VIA } from './sdk-approval'

/**
 * A `toolErrorFormatter` for `run()` (or `new Runner({ toolErrorFormatter })`) that tells the
 * model of `state.reject(item)` on a Dogu tool in Dogu's words, naming who declined
 * (`Permission denied: alice declined it`), instead of the SDK's `Tool execution was not
 * approved.` A `message` given to `state.reject` still wins, and other tools keep the SDK's text.
 *
 * The SDK ends a rejected call without calling the tool, so Dogu does not see it and keeps
 * no audit record of it. Give it the options given to `agentsTools`, so it names the same approver.
 *
 * @example
 * result = await run(agent, result.state, { toolErrorFormatter: agentsRejectionFormatter(toolset) })
 */
export function agentsRejectionFormatter<TContext = unknown>(toolset: Toolset, options: AgentsToolsOptions<TContext> = {}): ToolErrorFormatter<TContext> {
  const names = new Set(toolset.names)
  const runs = new AgentsRuns(toolset, options)
  return ({ kind, toolType, toolName, callId, runContext }) => {
    if (kind !== 'approval_rejected' || toolType !== 'function' || !names.has(toolName)) return undefined
    const { session } = runs.toolsetOf(runContext)
    const { by } = frameworkAnswer(session, false, AGENTS_VIA, runs.approverOf(callId, runContext))
    const label = typeof by === 'string' ? by : by.platform ? `${by.platform}:${by.id}` : by.id
    const declined: ToolResult = { id: callId, name: toolName, status: 'denied', content: '', durationMs: 0, code: 'permission_denied', params: { cause: 'declined', by: label } }
    return describeResult(declined, 'en-US')
  }
}
