import type { RunningCall } from '../src/background-port'
import type { Session } from '../src/session'
import type { ToolResult, ToolStatus } from '../src/tool-result'

let counter = 0

/**
 * A call as the pipeline hands it to the background: its result is settled by hand, and
 * `cancel` settles it as `cancelled`, as the pipeline does.
 */
export function runningCall(session: Session = { id: 's1' }, tool = 'slow') {
  let settle!: (result: ToolResult) => void
  const result = new Promise<ToolResult>((resolve) => { settle = resolve })
  const cancels: string[] = []
  const callId = `c${++counter}`
  const make = (status: ToolStatus, content: string, extra: Partial<ToolResult> = {}): ToolResult =>
    ({ id: callId, name: tool, status, content, durationMs: 1, ...extra })
  const call: RunningCall = {
    callId,
    tool,
    session,
    args: { n: counter },
    startedAt: Date.now(),
    result,
    cancel(reason) {
      cancels.push(reason ?? '')
      settle(make('cancelled', `Cancelled: ${reason}.`, { code: 'cancelled' }))
    },
  }
  return { call, cancels, settle: (status: ToolStatus, content: string, extra?: Partial<ToolResult>) => {
    const value = make(status, content, extra)
    settle(value)
    return value
  } }
}

/** A logger that keeps what it is told, formatted roughly. */
export function memoryLogger() {
  const lines: string[] = []
  const format = (template: string, args: unknown[]) => {
    let i = 0
    return template.replace(/%[sdo]/g, () => String(args[i++]))
  }
  return {
    lines,
    logger: {
      debug: (template: string, ...args: unknown[]) => { lines.push(`debug: ${format(template, args)}`) },
      warn: (template: string, ...args: unknown[]) => { lines.push(`warn: ${format(template, args)}`) },
    },
  }
}

/** Lets queued promise callbacks run; works under fake timers, which fake `setImmediate`. */
export async function flush(rounds = 10) {
  for (let i = 0; i < rounds; i++) await Promise.resolve()
}
