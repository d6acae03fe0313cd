import type { AskAnswer } from './permissions/asker'
import type { PermissionMode } from './permissions/permission-modes'
import type { RunningCall } from './running-calls'
import { CALL_SERIAL, type CallInfo, type ResumedFrom } from './events'
import type { Session } from './session'
import type { PermissionSpec, Tool } from './tool'
import type { CallSpan } from './telemetry/call-telemetry'
import type { ToolCall } from './tool-call'
import type { ToolPreview } from './tool-preview'
import type { Elicitation, ElicitationSchema, ElicitOptions, LogLevel } from './elicitation/elicitation'
import type { QuotaReservation } from './quotas/quota-book'
import type { RepairRecord } from './repair/repair-step'
import { abortReason } from './messages/en-us'
import type { AbortCause } from './result-params'
import type { HeldPlaces, RunningCaps } from './quotas/running-caps'
import { maskSecrets } from './secret-fields'
import { ToolDenial } from './tool-denial'
import type { ToolEntry } from './tool-entry'
import type { ToolResult, ToolStatus } from './tool-result'

/** The last call's serial; wraps before leaving the small integers, which are never boxed. */
let serials = 0

/** Why a call's signal aborted; it decides the status the call ends with. */
export type AbortKind = 'cancelled' | 'timed_out' | 'disposed'

export interface CallHooks {
  progress(call: ActiveCall, message: string): void
  ask(call: ActiveCall, reason: string, preview?: ToolPreview): Promise<void>
  elicit(call: ActiveCall, schema: ElicitationSchema, message: string, options?: ElicitOptions): Promise<Elicitation>
  log(call: ActiveCall, level: LogLevel, data: unknown): void
  /** The signal aborted: settle the call now, whatever the handler does. */
  aborted(call: ActiveCall): void
  /** The deadline passed while the handler was running. */
  expired(call: ActiveCall): void
}

/**
 * One call in flight: the `call` object a tool's `run` receives, and the pipeline's state
 * for it. Its AbortController is created only when someone reads `signal`, since most
 * calls finish without anyone looking.
 */
export class ActiveCall implements ToolCall, RunningCall, CallInfo {
  /** The pipeline's identity of the call (`CALL_SERIAL`): the model's `id` may repeat within a batch. */
  readonly [CALL_SERIAL] = serials = (serials + 1) & 0x3fffffff
  at = Infinity
  startedAt = Date.now()
  /** Set once the call has a final result; later outcomes are dropped. */
  settled = false
  /** Set when the background service took the call over. */
  adopted = false
  /** Set when the call waited (for a person, a slot, the batch gate) before it ran. */
  waited = false
  /** Where the final result goes; set as the call starts through the stages, rewired on adoption. */
  sink?: (result: ToolResult) => void = undefined
  // Rarely set, so declared without an initializer: a call that never needs them does not
  // pay for them (`declare` emits no field definition).
  /** The last progress message, kept for a `timed_out` result. */
  declare lastProgress?: string
  /** Milliseconds spent waiting for a person's answer (the pipeline's ask and `call.ask`). */
  declare waitMs?: number
  /** When the handler started; unset until then. */
  declare runAt?: number
  /** `waitMs` when the handler started, so `durationMs` leaves out only the waits inside it. */
  declare waitBeforeRun?: number
  declare abortKind?: AbortKind
  /** Why the call was aborted, in the model's English (`abortReason(abortCause)`). */
  declare abortMessage?: string
  /** Why the call was aborted, as the parameters of its `timed_out` or `cancelled` result. */
  declare abortCause?: AbortCause
  /** Frees the tool's concurrency slot, once. */
  declare release?: () => void
  /** The call's places under `maxRunning`, given back once with `releaseSlot`. */
  private declare places?: HeldPlaces
  private declare caps?: RunningCaps
  /** Bounds the call's wait for a place to run by its timeout. */
  declare waitTimer?: ReturnType<typeof setTimeout>
  /** The quota units the call took; given back if its tool never starts. */
  declare reservation?: QuotaReservation
  /** Set once the limits stage counted the call against its quotas (the authorize stage does before it asks). */
  declare quotaTaken?: boolean
  /** Set when the tool's `run` was called, for a call holding quota units. */
  declare toolStarted?: boolean
  /** How the model's malformed arguments were repaired, when they were. */
  declare repaired?: RepairRecord
  /** The permission the call was authorized under (a middleware's rewrite may change it). */
  declare permission?: PermissionSpec
  /** The call's span, when a tracer or meter provider is registered. */
  declare span?: CallSpan
  /** The answer its caller's framework already has, should the call be asked about (`ExecuteOptions.answers`). */
  declare answer?: Readonly<AskAnswer>
  /** Set on a call run for an answer given after a restart (`CallInfo.resumes`). */
  declare resumes?: ResumedFrom
  /** The last result a step of the middleware chain produced: what a middleware that returns it passes on unchanged. */
  declare passed?: ToolResult
  /** The handler's promise inside the middleware chain. */
  declare handled?: Promise<ToolResult>
  /**
   * The chain to end with the handler's result, when the chain's outcome is the handler's
   * promise itself (a `ChainRun`; named by what the call needs of it, so the call's type
   * does not import the chain that imports it).
   */
  declare chainRun?: { ended(result: ToolResult): void }
  private declare controller?: AbortController

  constructor(
    public readonly id: string,
    public readonly entry: ToolEntry,
    public readonly session: Session,
    /** The arguments as validated: what `permission`, `preview` and `run` receive (an approver's edit replaces them: `revise`). */
    public input: unknown,
    private hooks: CallHooks,
    /** The session's mode when the call was prepared, read once (see `modeFor`). */
    public readonly mode: PermissionMode = 'default',
  ) {
    this.args = maskSecrets(input, entry.secrets)
  }

  /**
   * The arguments as hosts, logs, consoles and the permission service see them (`CallInfo`):
   * secret fields (`.role('secret')`) shown as `••••`. The same object as `input` when the
   * tool has none.
   */
  args: unknown
  /** What an approver changed before approving (`revise`); unset for a call as the model made it. */
  declare edits?: readonly string[]

  /** Runs the call with an approver's edited arguments, already validated and authorized. */
  revise(input: unknown, args: unknown, changes: readonly string[]): void {
    this.input = input
    this.args = args
    this.edits = changes
  }

  /** Runs the call with a middleware's rewritten arguments, already validated and authorized. */
  rewrite(input: unknown, args: unknown, permission: PermissionSpec): void {
    this.input = input
    this.args = args
    this.permission = permission
  }

  get tool(): Tool {
    return this.entry.tool
  }

  get name() {
    return this.entry.tool.name
  }

  get deadline() {
    return this.at
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController()
      if (this.abortKind) this.controller.abort(this.abortError())
    }
    return this.controller.signal
  }

  releaseSlot(): void {
    const release = this.release
    this.release = undefined
    release?.()
    const places = this.places
    if (places) {
      this.places = undefined
      this.caps!.release(places)
    }
  }

  /** Holds places under `maxRunning` until `releaseSlot`. */
  holdPlaces(caps: RunningCaps, places: HeldPlaces): void {
    this.caps = caps
    this.places = places
  }

  /** What a log or the WebUI should see of the call: its `CallInfo`, not the pipeline. */
  toJSON(): CallInfo {
    const info: CallInfo = { id: this.id, name: this.name, session: this.session, args: this.args, startedAt: this.startedAt }
    if (this.repaired) info.repaired = this.repaired
    if (this.resumes) info.resumes = this.resumes
    return info
  }

  /**
   * The call's own time: from its handler's start to now, less the time it waited for a
   * person inside it (`call.ask`); for a call that never ran, from its start less its
   * approval wait. Waits for a person or for a concurrency slot are not the tool's time.
   */
  durationMs(): number {
    // Date.now, not performance.now: the latter costs about a tenth of a fast call.
    const now = Date.now()
    if (this.runAt === undefined) return now - this.startedAt - (this.waitMs ?? 0)
    return now - this.runAt - ((this.waitMs ?? 0) - (this.waitBeforeRun ?? 0))
  }

  /** Adds the time since `since` to the time this call waited for a person. */
  waitedFor(since: number): void {
    this.waitMs = (this.waitMs ?? 0) + (Date.now() - since)
  }

  get aborted() {
    return this.abortKind !== undefined
  }

  /** Aborts the call's signal once; the first reason wins. A string is a reason in someone's own words. */
  abort(kind: AbortKind, cause: AbortCause | string): void {
    if (this.abortKind) return
    this.abortKind = kind
    this.abortCause = typeof cause === 'string' ? { cause: 'other', reason: cause } : cause
    this.abortMessage = abortReason(this.abortCause)
    this.controller?.abort(this.abortError())
    this.hooks.aborted(this)
  }

  fire(): void {
    this.hooks.expired(this)
  }

  progress(message: string): void {
    if (this.settled) return
    this.lastProgress = String(message)
    // After adoption the model has its answer; progress stays on the task, not the chat.
    if (!this.adopted) this.hooks.progress(this, this.lastProgress)
  }

  ask(reason: string, options?: { preview?: ToolPreview }): Promise<void> {
    if (this.abortKind) return Promise.reject(this.abortError())
    return this.hooks.ask(this, String(reason), options?.preview)
  }

  elicit(schema: ElicitationSchema, message: string, options?: ElicitOptions): Promise<Elicitation> {
    if (this.abortKind) return Promise.reject(this.abortError())
    return this.hooks.elicit(this, schema, String(message), options)
  }

  log(level: LogLevel, data: unknown): void {
    if (this.settled) return
    this.hooks.log(this, level, data)
  }

  deny(reason: string): never {
    throw new ToolDenial(String(reason))
  }

  private abortError() {
    const error = new Error(this.abortMessage)
    error.name = this.abortKind === 'timed_out' ? 'TimeoutError' : 'AbortError'
    return error
  }
}

export const ABORT_STATUS: Record<AbortKind, ToolStatus> = {
  cancelled: 'cancelled',
  timed_out: 'timed_out',
  disposed: 'cancelled',
}
