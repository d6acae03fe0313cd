import type { Session } from './session'
import type { ToolResult } from './tool-result'

/** A call still running when its timeout fired, offered to the background service. */
export interface RunningCall {
  callId: string
  tool: string
  session: Session
  /** Secret fields masked, as in `CallInfo`. */
  args: unknown
  startedAt: number
  /** Settles with the result the call would have returned; never rejects. */
  result: Promise<ToolResult>
  /** Aborts the call's signal; the result then settles as `cancelled`. */
  cancel(reason?: string): void
}

/** The seam between the pipeline and a background service. */
export interface BackgroundPort {
  /** Takes over a running call; returns the task id the model can follow. */
  adopt(call: RunningCall): { id: string }
}
