import type { BackgroundTask, Session } from '@dogu/core'
import { resultText } from './providers/result-text'

/** Where settled tasks come from: a subscription that returns its disposer. */
export type SettledSubscription = (listener: (task: BackgroundTask) => void) => () => void

export interface TaskNoticesOptions {
  /** Only tasks started in this session (or session id) are kept. */
  session: Session | string
  /**
   * Subscribes to settled tasks, e.g. `(listener) => ctx.on('background/settled', listener)`
   * on Cordis, or a `BackgroundEngine`'s `onSettled` fanned out by the host.
   */
  subscribe: SettledSubscription
}

/**
 * Background tasks of one session that settled and that the model has not been told of
 * yet. Pass it to `runAgent({ notices })`: before each model turn the loop takes what
 * settled and adds it to the conversation as a notice. Keep one for a whole chat, so tasks
 * that settle between two runs are told in the next; `dispose()` when the chat ends.
 */
export class TaskNotices {
  private queue: BackgroundTask[] = []
  private unsubscribe: (() => void) | undefined
  private readonly sessionId: string

  constructor(options: TaskNoticesOptions) {
    this.sessionId = typeof options.session === 'string' ? options.session : options.session.id
    this.unsubscribe = options.subscribe((task) => {
      if (task.session.id === this.sessionId) this.queue.push(task)
    })
  }

  /** How many are waiting. */
  get size(): number {
    return this.queue.length
  }

  /** The settled tasks not yet taken, oldest first; they are not returned again. */
  take(): BackgroundTask[] {
    return this.queue.splice(0)
  }

  /** Stops listening; a second call does nothing. */
  dispose(): void {
    this.unsubscribe?.()
    this.unsubscribe = undefined
    this.queue = []
  }
}

/** The first words of every notice: what tells the model it is not the user speaking. */
export const NOTICE_PREFIX = '[notice from the tool runtime, not the user]'

const OUTCOMES: Readonly<Record<BackgroundTask['status'], string>> = Object.freeze({
  running: 'is still running',
  succeeded: 'finished',
  failed: 'failed',
  cancelled: 'was cancelled',
  interrupted: 'was interrupted by a restart; its result is lost',
})

/** The text of the notice for settled tasks, one paragraph per task. */
export function noticeText(tasks: readonly BackgroundTask[]): string {
  const lines = tasks.map((task) => {
    const head = `Background task ${task.id} (${task.tool}, from call ${task.callId}) ${OUTCOMES[task.status]}.`
    return task.result ? `${head}\nResult: ${resultText(task.result, true)}` : head
  })
  return `${NOTICE_PREFIX}\n${lines.join('\n\n')}`
}
