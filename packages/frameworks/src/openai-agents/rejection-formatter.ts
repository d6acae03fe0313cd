import { describeResult, type Toolset, type ToolResult } from '@dogu/core'
import type { ToolErrorFormatter } from '@openai/agents'
import { AgentsRuns, type AgentsToolsOptions } from './agents-options'
import { frameworkAnswer } from '../common/framework-answer'
import { AGENTS_VIA } from './sdk-approval'
import { takeAsked } from './asked-calls'

/**
 * A `toolErrorFormatter` for `run()` (or `new Runner({ toolErrorFormatter })`) that tells the
 * model of `state.reject(item)` on a Dogu tool in Dogu's words, naming who declined
 * (`Permission denied: alice declined it`), instead of the SDK's `Tool execution was not
 * approved.`, and gives Dogu the rejection as the call's answer: the call is declined through
 * the pipeline (never run) and audited as declined, `via: 'openai-agents'`. A `message` given
 * to `state.reject` still wins, and the SDK then does not call the formatter: that rejection
 * is not audited. Nor is one of a `RunState` asked in another process (the SDK tells the
 * formatter no arguments; the ones asked about are kept in this process only). Other tools
 * keep the SDK's text. Give it the options given to `agentsTools`, so it names the same approver.
 *
 * @example
 * result = await run(agent, result.state, { toolErrorFormatter: agentsRejectionFormatter(toolset) })
 */
export function agentsRejectionFormatter<TContext = unknown>(toolset: Toolset, options: AgentsToolsOptions<TContext> = {}): ToolErrorFormatter<TContext> {
  const names = new Set(toolset.names)
  const runs = new AgentsRuns(toolset, options)
  return async ({ kind, toolType, toolName, callId, runContext }) => {
    if (kind !== 'approval_rejected' || toolType !== 'function' || !names.has(toolName)) return undefined
    const callToolset = runs.toolsetOf(runContext)
    const answer = frameworkAnswer(callToolset.session, false, AGENTS_VIA, runs.approverOf(callId, runContext))
    const asked = takeAsked(callToolset.session.id, toolName, callId)
    if (asked) {
      // A no is final: the pipeline declines the call (and audits it) whatever the rules say now.
      const [result] = await callToolset.execute([{ id: callId, name: toolName, arguments: asked.input as never }], { answers: { [callId]: answer } })
      if (result!.status === 'denied') return result!.content
    }
    const { by } = answer
    const label = typeof by === 'string' ? by : by.platform ? `${by.platform}:${by.id}` : by.id
    const declined: ToolResult = { id: callId, name: toolName, status: 'denied', content: '', durationMs: 0, code: 'permission_denied', params: { cause: 'declined', by: label } }
    return describeResult(declined, 'en-US')
  }
}
