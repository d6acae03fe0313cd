import type { PermissionMode } from './permissions/permission-modes'
import type { ToolPreview } from './types/tool-preview'
import type { Session } from './session'
import type { ElicitationSchema, Elicitation, ElicitOptions, LogLevel } from './elicitation/elicitation'

/** A tool call as a model sends it. `arguments` is a JSON string or an already parsed object. */
export interface ModelToolCall {
  id: string
  name: string
  arguments?: string | Record<string, unknown> | null
}

/**
 * What `run(args, call)` receives: the call's identity, its session, and its controls.
 * `signal` aborts on cancel, timeout and plugin disposal alike.
 */
export interface ToolCall {
  readonly id: string
  readonly name: string
  readonly session: Session
  readonly signal: AbortSignal
  /** Epoch milliseconds after which the call counts as timed out. */
  readonly deadline: number
  /**
   * The permission mode of the call's session when the call started (`'default'` without
   * a permission service). It stays fixed for the call, so `permission(args, call)` and
   * `run(args, call)` see the same one: a shell tool can confine itself in `readOnly`.
   */
  readonly mode: PermissionMode
  /** Reports progress to hosts (`tools/call-progress`); never reaches the model's history. */
  progress(message: string): void
  /**
   * Suspends until a person approves; rejects with a denial the pipeline reports as `denied`.
   * `preview`: what the person approves, when it is not the call's own preview (a redirect's
   * URL as it will be fetched).
   */
  ask(reason: string, options?: { preview?: ToolPreview }): Promise<void>
  /**
   * Asks a person to fill a form (a flat object of strings, numbers, booleans, enums) and
   * waits for the answer: over MCP the client's elicitation, elsewhere every asker (chat,
   * consoles, terminal), as an input question. `accept` carries the values validated
   * against `schema` with its defaults; `decline` is a no; `cancel` means nobody answered.
   * Never rejects for a person's answer; rejects only when the call is already aborted.
   */
  elicit<T = any>(schema: ElicitationSchema<T>, message: string, options?: ElicitOptions): Promise<Elicitation<T>>
  /**
   * A log line of the call (`tools/call-log`): MCP clients receive it as
   * `notifications/message` at or above the level they set; never part of the model's text.
   */
  log(level: LogLevel, data: unknown): void
  /** Ends the call as `denied` with this reason. */
  deny(reason: string): never
}
