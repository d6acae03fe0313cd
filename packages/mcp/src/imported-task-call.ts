import type { ToolCall } from '@dogu/core'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import {
  type CallToolResult,
  CallToolResultSchema,
  CreateTaskResultSchema,
  ErrorCode,
  McpError as SdkError,
  type ServerCapabilities,
  type Task,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js'

/**
 * Whether Dogu calls an imported tool in task mode: the tool accepts it
 * (`execution.taskSupport` `optional` or `required`) and its server declared tasks for
 * `tools/call`.
 */
export function callsAsTask(tool: Pick<McpTool, 'execution'>, capabilities: ServerCapabilities | undefined): boolean {
  const support = tool.execution?.taskSupport
  return (support === 'optional' || support === 'required') && !!capabilities?.tasks?.requests?.tools?.call
}

export interface ImportedTaskCallOptions {
  /** The server's name, for messages. */
  server: string
  /** Milliseconds each request (the call, each poll, each wait for the result) may take. */
  requestTimeout: number
  /** `_meta` of the `tools/call` (a trace context). */
  meta?: Record<string, unknown>
  /** How long the server should keep the task once done, in milliseconds (`params.task.ttl`). Unset: the server's choice. */
  ttl?: number
  /** Poll interval bounds in milliseconds, whatever the server asks. @default [100, 10_000] */
  pollBounds?: readonly [min: number, max: number]
}

/** The poll interval when the server states none (the SDK's default). */
const DEFAULT_POLL_INTERVAL = 1_000
const DEFAULT_POLL_BOUNDS = [100, 10_000] as const
/** How long a `tasks/cancel` sent as the call is aborted may take; the call ends without waiting for it. */
const CANCEL_TIMEOUT = 5_000

const TERMINAL: ReadonlySet<Task['status']> = new Set(['completed', 'failed', 'cancelled'])

/**
 * Calls an imported tool in task mode and resolves with its result, as `client.callTool`
 * would: the server answers with a task at once, which is polled (`tasks/get`, at the
 * interval the server asks, within `pollBounds`) until it is done, then `tasks/result` is
 * fetched. Status messages become `call.progress`. A task waiting for input
 * (`input_required`) is waited for through `tasks/result`, which carries the server's
 * requests (elicitations) to the client's handlers.
 *
 * The call's signal bounds it: the pipeline's timeout, or, for a tool with `background`
 * whose call moved to Dogu's background on timeout, a cancel of that Dogu task. Either way
 * the remote task is cancelled (`tasks/cancel`), and the call rejects with the signal's reason.
 */
export async function callImportedTask(client: Client, tool: string, args: Record<string, unknown>, call: ToolCall, options: ImportedTaskCallOptions): Promise<CallToolResult> {
  const { signal } = call
  const timeout = options.requestTimeout
  let task: Task | undefined
  try {
    const created = await client.request(
      { method: 'tools/call', params: { name: tool, arguments: args, ...(options.meta ? { _meta: options.meta } : {}) } },
      CreateTaskResultSchema,
      { signal, timeout, task: options.ttl === undefined ? {} : { ttl: options.ttl } },
    )
    task = created.task
    let reported = report(call, task, undefined)
    while (!TERMINAL.has(task.status)) {
      if (task.status === 'input_required') {
        const result = await waitForResult(client, task.taskId, signal, timeout)
        if (result) return result
      } else {
        await sleep(pollDelay(task, options.pollBounds ?? DEFAULT_POLL_BOUNDS), signal)
      }
      task = await client.experimental.tasks.getTask(task.taskId, { signal, timeout })
      reported = report(call, task, reported)
    }
    return await finalResult(client, task, signal, timeout, options.server)
  } catch (error) {
    if (!signal.aborted) throw error
    if (task && !TERMINAL.has(task.status)) {
      // Best effort: the call ends now, whether or not the server hears of it.
      void client.experimental.tasks.cancelTask(task.taskId, { timeout: CANCEL_TIMEOUT }).catch(() => {})
    }
    throw signal.reason ?? error
  }
}

/** `tasks/result` of a task that waits for input: its result once done, or `undefined` when one wait ran out (poll again). */
async function waitForResult(client: Client, taskId: string, signal: AbortSignal, timeout: number): Promise<CallToolResult | undefined> {
  try {
    return await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, { signal, timeout }) as CallToolResult
  } catch (error) {
    if (error instanceof SdkError && error.code === ErrorCode.RequestTimeout && !signal.aborted) return undefined
    throw error
  }
}

/** What a done task returned; a failed or cancelled one the server keeps no result of is an error saying so. */
async function finalResult(client: Client, task: Task, signal: AbortSignal, timeout: number, server: string): Promise<CallToolResult> {
  try {
    return await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, { signal, timeout }) as CallToolResult
  } catch (error) {
    if (task.status === 'completed' || signal.aborted) throw error
    const why = task.statusMessage ? `: ${task.statusMessage}` : ''
    throw new Error(`the MCP server "${server}" reports task ${task.taskId} ${task.status}${why}`)
  }
}

/** Reports a new status message (or a wait for input) as progress; returns what was last reported. */
function report(call: ToolCall, task: Task, last: string | undefined): string | undefined {
  const line = task.statusMessage || (task.status === 'input_required' ? 'waiting for input' : undefined)
  if (line && line !== last) call.progress(line)
  return line ?? last
}

function pollDelay(task: Task, [min, max]: readonly [number, number]): number {
  const asked = typeof task.pollInterval === 'number' && Number.isFinite(task.pollInterval) ? task.pollInterval : DEFAULT_POLL_INTERVAL
  return Math.min(max, Math.max(min, asked))
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const done = () => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal.reason)
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', onAbort, { once: true })
  })
}
