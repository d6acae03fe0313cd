import type { BackgroundTask, ModelToolCall, Session, Toolset, ToolsetOptions } from '@dogu/core'
import { ErrorCode, McpError as SdkError } from '@modelcontextprotocol/sdk/types.js'
import type { McpBackground } from './mcp-task-store'

/**
 * The toolset options of calls in task mode: the pipeline hands a call to the background as
 * soon as its handler starts (validation, rules, a person's approval and a place under
 * `maxRunning` come first, each with its usual bound). A call that settles before the
 * hand-over (a synchronous handler) is recorded as a settled task instead.
 */
export function taskModeToolset(options: ToolsetOptions): ToolsetOptions {
  return { ...options, backgroundAtStart: true }
}

export interface TaskModeCall {
  /** A toolset made with `taskModeToolset`. */
  toolset: Toolset
  background: McpBackground
  session: Session
  call: ModelToolCall
  /** The `tools/call` request's signal: cancelling it before the task exists cancels the call. */
  signal: AbortSignal
}

/** How long a call that settled at once may take to be recorded as a settled task (one microtask, in practice). */
const RECORD_TIMEOUT = 1_000

/**
 * Runs a `tools/call` that asked for a task (`params.task`) and resolves with the Dogu
 * background task that now carries it, once the pipeline handed it over (or once it settled,
 * recorded as a settled task). An unknown tool is `-32602`, as for a plain call; a tool
 * without `background` (listed with `execution.taskSupport` forbidden) is `-32601`.
 */
export async function runInTaskMode({ toolset, background, session, call, signal }: TaskModeCall): Promise<BackgroundTask> {
  const tool = toolset.get(call.name)
  if (!tool) throw new SdkError(ErrorCode.InvalidParams, `Unknown tool: ${call.name}`)
  if (tool.traits.background !== true) throw new SdkError(ErrorCode.MethodNotFound, `Tool ${call.name} does not support task mode: it cannot move to the background`)
  const [result] = await toolset.execute([call], { signal })
  if (result.status === 'background' && result.taskId) {
    const task = background.get(result.taskId)
    if (task) return task
  }
  if (result.status === 'background') throw new SdkError(ErrorCode.InternalError, `the call moved to the background but its task ${result.taskId} is unknown`)
  // Settled before it could be handed over, or refused before it ran (denied, invalid
  // arguments, rate limited): the requestor asked for a task, so the outcome is one.
  const recorded = background.adopt({
    callId: result.id,
    tool: result.name,
    session,
    args: undefined,
    startedAt: Date.now() - result.durationMs,
    result: Promise.resolve(result),
    cancel() {},
  })
  return await background.wait(recorded.id, { timeout: RECORD_TIMEOUT }) ?? recorded
}
