import { ActiveCall } from './active-call'
import { type CallDecision, decideCall } from './call-decision'
import type { BackgroundPort } from './background-port'
import type { ResumedFrom } from './events'
import { messageOf } from './error-message'
import { AuthorizeStage } from './pipeline/authorize-stage'
import { codedResult } from './pipeline/call-results'
import { LimitsStage } from './pipeline/limits-stage'
import { MiddlewareStage } from './pipeline/middleware-stage'
import { ParseStage } from './pipeline/parse-stage'
import type { PipelineHost, PipelineLimits, PipelineShared } from './pipeline/pipeline-host'
import { RunStage } from './pipeline/run-stage'
import { ScheduleStage } from './pipeline/schedule-stage'
import { SettleStage } from './pipeline/settle-stage'
import { isPromise, type Stage } from './pipeline/stage'
import { ToolCallHooks } from './pipeline/tool-call-hooks'
import { ValidateStage } from './pipeline/validate-stage'
import type { Session } from './session'
import type { ModelToolCall } from './tool-call'
import type { ToolEntry } from './tool-entry'
import type { ToolResult } from './tool-result'

export type { PipelineHost, PipelineLimits } from './pipeline/pipeline-host'

const noEncodedPaths = (): readonly string[] => []

/**
 * Runs one call through its stages (docs/pipeline.md): parse → validate, as it is prepared;
 * then authorize → limits → schedule → run (middleware around the handler) → settle. It only
 * orders them and holds what they share. Nothing here throws at the caller: every failure
 * becomes a result the model can read.
 */
export class CallPipeline {
  private parse: ParseStage
  private validate: ValidateStage
  private settle: SettleStage
  private runStage: RunStage
  private host: PipelineHost
  /** The stages a prepared call passes, in order; the last one, run, keeps it until it settles. */
  private stages: readonly Stage[]

  constructor(
    host: PipelineHost,
    entries: ReadonlyMap<string, ToolEntry>,
    session: Session,
    limits: PipelineLimits,
    /** The argument paths the model sends JSON-encoded for a tool, in the dialect it was shown. */
    encodedPaths: (entry: ToolEntry) => readonly string[] = noEncodedPaths,
  ) {
    const shared: PipelineShared = { host, entries, session, limits, encodedPaths }
    const settle = this.settle = new SettleStage(shared)
    const quotasAndCaps = new LimitsStage(shared)
    const run = this.runStage = new RunStage(shared, new MiddlewareStage(shared, settle), settle)
    this.host = host
    this.parse = new ParseStage(shared, settle)
    this.validate = new ValidateStage(shared, settle, new ToolCallHooks(shared, run, settle))
    this.stages = [new AuthorizeStage(shared, quotasAndCaps), quotasAndCaps, new ScheduleStage(), run]
  }

  /** Resolves, parses and validates a call. Returns a final result when the call cannot run. */
  prepare(input: ModelToolCall): ActiveCall | ToolResult {
    const parsed = this.parse.enter(input)
    return 'entry' in parsed ? this.validate.enter(parsed) : parsed
  }

  /** What would become of a call now, without making it (`Toolset.decide`). */
  decide(input: ModelToolCall): CallDecision | Promise<CallDecision> {
    return decideCall(this.parse, this.validate, this.host.permissions, input)
  }

  /** @internal `prepare` for a call run for an answer given after a restart: announced with `resumes`. */
  prepareResumed(input: ModelToolCall, resumes: ResumedFrom): ActiveCall | ToolResult {
    const parsed = this.parse.enter(input)
    return 'entry' in parsed ? this.validate.enter(parsed, resumes) : parsed
  }

  /**
   * Authorizes and runs a prepared call. A call every stage lets through at once stays
   * synchronous up to its handler: the runner awaits only the promises stages return.
   */
  run(call: ActiveCall): Promise<ToolResult> {
    return new Promise((resolve) => this.start(call, resolve))
  }

  /** `run` for a batch of one: resolves to `[result]` without an extra promise hop. */
  runAlone(call: ActiveCall): Promise<ToolResult[]> {
    return new Promise((resolve) => this.start(call, (result) => resolve([result])))
  }

  /**
   * @internal Starts a call approved before it was prepared (an answer given after a
   * restart: `ResumeCalls`, which marks it with `preApprove`). It is handed to `background`
   * at once, as a task of its session, and then passes every stage; its end settles the
   * task. Without `background`, or when the service refuses it, it runs all the same and its
   * end is only reported (`tools/call-end`). Returns the task's id, when there is one.
   */
  startResumed(call: ActiveCall, background: BackgroundPort | undefined): string | undefined {
    if (background) {
      try {
        const { taskId } = this.runStage.handOver(call, background, true)
        if (call.aborted) this.settle.endAborted(call)
        else this.advance(call, 0)
        return taskId
      } catch (error) {
        this.host.logger.warn('the background service refused %s (%s), resumed after a restart; it runs without a task, and its result is only reported: %s', call.name, call.id, messageOf(error))
      }
    }
    void this.run(call)
    return undefined
  }

  /** The call's result goes to `reply`, once, whichever stage ends it. */
  private start(call: ActiveCall, reply: (result: ToolResult) => void): void {
    call.sink = reply
    if (call.aborted) return this.settle.endAborted(call)
    this.advance(call, 0)
  }

  /** Passes the call through the stages from `index`: on at once, or on when a stage's promise resolves. */
  private advance(call: ActiveCall, index: number): void {
    const stages = this.stages
    for (; index < stages.length; index++) {
      const outcome = stages[index]!.enter(call)
      if (outcome === undefined) continue
      if (!isPromise(outcome)) return this.settle.end(call, outcome)
      const next = index + 1
      outcome.then((later) => this.resume(call, later, next), (error) => this.settle.end(call, codedResult(call, 'error', 'tool_error', { message: messageOf(error) })))
      return
    }
  }

  /** A stage answered later: the call ends with its result, or with its abort if it came meanwhile, or goes on. */
  private resume(call: ActiveCall, outcome: ToolResult | undefined, next: number): void {
    if (outcome) return this.settle.end(call, outcome)
    if (call.aborted) return this.settle.endAborted(call)
    this.advance(call, next)
  }
}
