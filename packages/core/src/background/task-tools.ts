import Schema from 'schemastery'
import { defineTool } from '../define-tool'
import type { Tool } from '../tool'
import type { ToolCall } from '../tool-call'
import type { ToolOutputObject } from '../tool-result'
import type { BackgroundEngine } from './background-engine'
import type { BackgroundTask } from './background-task'

/** What the task tools need of a background service. */
export type TaskTracker = Pick<BackgroundEngine, 'get' | 'list' | 'wait' | 'cancel'>

export interface TaskToolsOptions {
  /** The longest `wait_seconds` a model may ask for. @default 60 */
  maxWaitSeconds?: number
}

/**
 * The model's view of its background tasks: `task_status` (status and result, optionally
 * waiting a bounded time; without an id, the session's tasks) and `task_cancel`. A session
 * sees only its own tasks: another session's task is reported as not found.
 *
 * `task_status` is a `read` tool; `task_cancel` has effect `write` and asks for the
 * permission `task:cancel` with the task's tool name as target. Neither ever moves to the
 * background itself.
 */
export function createTaskTools(tasks: TaskTracker, options: TaskToolsOptions = {}): [Tool, Tool] {
  const maxWait = options.maxWaitSeconds ?? 60

  const own = (id: string | undefined, call: ToolCall): BackgroundTask | undefined => {
    const task = id ? tasks.get(id) : undefined
    return task && task.session.id === call.session.id ? task : undefined
  }

  const notFound = (id: string, call: ToolCall): Error => {
    const known = tasks.list({ session: call.session }).slice(-10).map((task) => task.id)
    const hint = known.length ? ` Tasks of this conversation: ${known.join(', ')}.` : ' This conversation has no background tasks.'
    return new Error(`no background task "${id}" in this conversation (it may have been removed after it ended).${hint}`)
  }

  // Schemas held in constants: written inline, TypeScript infers `run`'s args as `{}`.
  const statusArgs = Schema.object({
    id: Schema.string().description('The task id, e.g. "task_1a2b3c4d5e6f". Omit to list this conversation\'s tasks.'),
    wait_seconds: Schema.number().min(0).max(maxWait).default(0)
      .description(`Wait up to this many seconds (at most ${maxWait}) for a running task to end.`),
  })
  const cancelArgs = Schema.object({
    id: Schema.string().required().description('The task id, e.g. "task_1a2b3c4d5e6f".'),
  })

  const taskStatus = defineTool({
    name: 'task_status',
    description: 'Check a background task: a tool call that outlived its timeout keeps running as a task with an id. '
      + 'Returns its status and, once it has ended, its result. Set wait_seconds to wait for it to end. '
      + 'Without an id, lists the background tasks of this conversation.',
    args: statusArgs,
    traits: { effect: 'read', parallel: true, timeout: (maxWait + 30) * 1000, background: false },
    run: async (args, call): Promise<ToolOutputObject> => {
      const { id, wait_seconds: waitSeconds } = args
      if (!id) return listOutput(tasks.list({ session: call.session }))
      let task = own(id, call)
      if (!task) throw notFound(id, call)
      if (task.status === 'running' && waitSeconds! > 0) {
        task = (await tasks.wait(id, { timeout: waitSeconds! * 1000, signal: call.signal })) ?? task
      }
      return taskOutput(task, maxWait)
    },
  })

  const taskCancel = defineTool({
    name: 'task_cancel',
    description: 'Stop a running background task by its id. Returns the task\'s final status.',
    args: cancelArgs,
    permission: (args, call) => ({ name: 'task:cancel', target: own(args.id, call)?.tool }),
    traits: { effect: 'write', parallel: false, timeout: 30_000, background: false },
    run: async (args, call): Promise<ToolOutputObject> => {
      const { id } = args
      const task = own(id, call)
      if (!task) throw notFound(id, call)
      if (task.status !== 'running') {
        return { text: `Task ${task.id} (${task.tool}) had already ended: ${task.status}. Nothing was cancelled.`, data: task }
      }
      const after = (await tasks.cancel(id, 'the model cancelled the task with task_cancel')) ?? task
      if (after.status === 'running') {
        return { text: `Cancellation of task ${id} (${task.tool}) was requested, but it has not stopped yet. Check it with task_status.`, data: after }
      }
      return { text: `Task ${id} (${task.tool}) ${after.status === 'cancelled' ? 'was cancelled' : `ended: ${after.status}`}.`, data: after }
    },
  })

  return [taskStatus, taskCancel]
}

const SETTLED_TEXT: Record<Exclude<BackgroundTask['status'], 'running' | 'interrupted'>, string> = {
  succeeded: 'succeeded',
  failed: 'failed',
  cancelled: 'was cancelled',
}

function taskOutput(task: BackgroundTask, maxWait: number): ToolOutputObject {
  const head = `Task ${task.id} (${task.tool})`
  if (task.status === 'running') {
    const seconds = Math.round((Date.now() - task.startedAt) / 1000)
    return {
      text: `${head} is still running (started ${seconds}s ago). Check again later with task_status — wait_seconds (up to ${maxWait}) waits for it — or stop it with task_cancel.`,
      data: task,
    }
  }
  if (task.status === 'interrupted' || !task.result) {
    return { text: `${head} was interrupted: the service stopped while it was running, so its result is lost. Run the tool again if it is still needed.`, data: task }
  }
  const seconds = Math.round(((task.settledAt ?? Date.now()) - task.startedAt) / 100) / 10
  const output: ToolOutputObject = { text: `${head} ${SETTLED_TEXT[task.status]} after ${seconds}s. Its result:\n${task.result.content}`, data: task }
  if (task.result.images?.length) output.images = task.result.images
  return output
}

function listOutput(tasks: BackgroundTask[]): ToolOutputObject {
  if (!tasks.length) return { text: 'This conversation has no background tasks.', data: [] }
  const recent = tasks.slice(-20)
  const lines = recent.map((task) => `- ${task.id} (${task.tool}): ${task.status}`)
  const more = tasks.length > recent.length ? `\n(${tasks.length - recent.length} older tasks not shown)` : ''
  return { text: `Background tasks of this conversation, oldest first:\n${lines.join('\n')}${more}`, data: recent }
}
