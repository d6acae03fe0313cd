import { ABORT_STATUS, ActiveCall, type CallHooks } from './active-call'
import type { BackgroundPort } from './background-port'
import { closestNames } from './closest-names'
import type { RunningCalls } from './running-calls'
import type { EmitFunction } from './events'
import type { Logger } from './logger'
import { normalizeOutput, truncateContent } from './normalize-output'
import { ArgumentsProblem, decodeArguments, parseArguments } from './parse-arguments'
import type { ApprovalOutcome, ApprovalRequest, AuthorizeRequest, AuthorizeResult, Decision, PermissionGate, PipelineDecision, RevisedCall } from './permission-gate'
import { isPermissionMode, type PermissionMode } from './permissions/permission-modes'
import type { PermissionSpec } from './tool'
import type { Session } from './session'
import type { ModelToolCall } from './tool-call'
import { ToolDenial } from './tool-denial'
import { ToolRateLimit } from './tool-rate-limit'
import type { ToolEntry } from './tool-entry'
import type { ToolResult, ToolResultCode, ToolStatus } from './tool-result'
import { normalizePreview, PREVIEW_TIMEOUT, type ToolPreview } from './tool-preview'
import { messageOf } from './error-message'
import { checkRevision, editNote, editorFor } from './argument-editor'
import { permissionOf, requestFor } from './call-request'
import type { MiddlewareStack, RegisteredMiddleware } from './middleware/middleware-stack'
import { type ChainHost, ChainRun } from './middleware/middleware-chain'
import type { Redactor } from './redaction/redactor'
import type { QuotaBook, QuotaOutcome, QuotaRefusal } from './quotas/quota-book'
import { formatDuration } from './quotas/duration'
import type { RunningCaps } from './quotas/running-caps'
import { maskRepairRecord } from './repair/mask-repaired-text'
import { repairArguments } from './repair/repair-arguments'
import { formatMaskedIssues, withoutQuotedText } from './secret-issues'
import type { RepairRecord } from './repair/repair-step'
import { telemetry } from './telemetry/call-telemetry'
import { TOOL_STATUSES } from './tool-result'
import { type Elicitation, type ElicitationSchema, type ElicitOptions, LOG_LEVELS, type LogLevel } from './elicitation/elicitation'
import { elicitQuestion } from './elicitation/elicit-question'

/** What a pipeline reads from its registry at call time: services may come and go. */
export interface PipelineHost {
  readonly permissions: PermissionGate | undefined
  readonly background: BackgroundPort | undefined
  readonly emit: EmitFunction | undefined
  readonly logger: Logger
  readonly running: RunningCalls<ActiveCall>
  /** `use()`'s middlewares, around every call they match. */
  readonly middleware: MiddlewareStack
  /** Secrets replaced in every result and progress line (`redact`). */
  readonly redactor: Redactor
  /** `quotas`: units a call takes as it passes authorization. */
  readonly quotas: QuotaBook
  /** `maxRunning`: places a call takes as its handler starts. */
  readonly caps: RunningCaps
  /** Repair malformed JSON arguments (`repair`), rather than refuse them. */
  readonly repair: boolean
}

export interface PipelineLimits {
  /** Longest content a result may carry before it is cut. */
  maxContentLength: number
  /** Longest JSON arguments string accepted. */
  maxArgumentsLength: number
  /** An upper bound on every tool's timeout, set by the host. */
  timeout: number
  /** Hand a call of a tool with `background` to the background service as its handler starts. */
  backgroundAtStart?: boolean
}

let callCounter = 0
const noEncodedPaths = (): readonly string[] => []
const LOG_LEVEL_SET: ReadonlySet<string> = new Set(LOG_LEVELS)
const DECISIONS: ReadonlySet<unknown> = new Set<Decision>(['allow', 'ask', 'deny'])
/** Edited calls the pipeline's editors validated (`editorFor`); only these may run. */
const validatedEdits = new WeakSet<RevisedCall>()
/** What a middleware may end a call with: every status but `background` (only the pipeline adopts). */
const MIDDLEWARE_STATUSES: ReadonlySet<unknown> = new Set(TOOL_STATUSES.filter((status) => status !== 'background'))

/**
 * Runs one call through validate → authorize → run → report. Nothing here throws at the
 * caller: every failure becomes a result the model can read.
 */
export class CallPipeline implements CallHooks, ChainHost {
  constructor(
    private host: PipelineHost,
    private entries: ReadonlyMap<string, ToolEntry>,
    private session: Session,
    private limits: PipelineLimits,
    /** The argument paths the model sends JSON-encoded for a tool, in the dialect it was shown. */
    private encodedPaths: (entry: ToolEntry) => readonly string[] = noEncodedPaths,
  ) {}

  /** Resolves and validates a call. Returns a final result when the call cannot run. */
  prepare(input: ModelToolCall): ActiveCall | ToolResult {
    const id = typeof input?.id === 'string' && input.id ? input.id : `call_${++callCounter}`
    const name = input?.name
    const entry = typeof name === 'string' ? this.entries.get(name) : undefined
    if (!entry) return this.reject(id, name, 'unknown_tool', this.unknownMessage(name))
    let parsed = parseArguments(input.arguments, this.limits.maxArgumentsLength)
    let repaired: RepairRecord | undefined
    if (parsed instanceof ArgumentsProblem) {
      // Text that did not parse may hold a secret anywhere: V8's excerpt of it is not quoted.
      const problem = entry.secrets ? withoutQuotedText(parsed.message) : parsed.message
      if (!parsed.repairable || !this.host.repair) return this.reject(id, name!, 'invalid_arguments', problem, entry)
      const text = input.arguments as string
      const fixed = repairArguments(text)
      if ('error' in fixed) return this.reject(id, name!, 'invalid_arguments', `${problem} They cannot be repaired without guessing: ${fixed.error}.`, entry)
      // The model's text, shown to askers, events and logs, with the secret fields' values masked.
      repaired = maskRepairRecord(fixed.repaired, text, [fixed.value], entry.secrets)
      // The repaired text goes through the same checks (forbidden keys, an object) as any.
      const strict = parseArguments(fixed.json, this.limits.maxArgumentsLength)
      if (strict instanceof ArgumentsProblem) return this.reject(id, name!, 'invalid_arguments', strict.message, entry, repaired)
      parsed = strict
    }
    const encoded = this.encodedPaths(entry)
    if (encoded.length) {
      const decoded = decodeArguments(parsed, encoded)
      if (decoded instanceof ArgumentsProblem) return this.reject(id, name!, 'invalid_arguments', entry.secrets ? withoutQuotedText(decoded.message) : decoded.message, entry, repaired)
      // A secret inside a field the dialect sends JSON-encoded is found once decoded.
      if (repaired && entry.secrets) repaired = maskRepairRecord(repaired, input.arguments as string, [parsed, decoded], entry.secrets)
      parsed = decoded
    }
    const checked = entry.validator(parsed)
    if (!checked.ok) return this.reject(id, name!, 'invalid_arguments', formatMaskedIssues(checked.issues, parsed, entry.secrets), entry, repaired)
    const call = new ActiveCall(id, entry, this.session, checked.value, this, modeFor(this.host.permissions, this.session))
    if (repaired) call.repaired = repaired
    if (telemetry) {
      const span = telemetry.start(call)
      if (span) call.span = span
    }
    this.host.emit?.('tools/call-start', call)
    return call
  }

  /**
   * Authorizes and runs a prepared call. The common case (allowed at once, no concurrency
   * cap) stays synchronous up to the handler: every `await` here costs a microtask per call.
   */
  run(call: ActiveCall): Promise<ToolResult> {
    return this.start(call, false)
  }

  /** `run` for a batch of one: resolves to `[result]` without an extra promise hop. */
  runAlone(call: ActiveCall): Promise<ToolResult[]> {
    return this.start(call, true)
  }

  private start(call: ActiveCall, single: boolean): Promise<any> {
    if (call.aborted) return ready(this.finishAborted(call), single)
    let permission: PermissionSpec
    try {
      permission = permissionOf(call)
    } catch (error) {
      return ready(this.finish(call, 'error', `Error: ${messageOf(error)}`, 'tool_error'), single)
    }
    call.permission = permission
    const gate = this.host.permissions
    if (!gate) {
      const effect = permission.effect ?? call.tool.traits.effect
      if (effect !== 'read') {
        return ready(this.finish(call, 'denied', `Permission denied: no permission service is loaded, so only read-only tools may run ("${call.name}" has effect "${effect}").`, 'no_permission_service'), single)
      }
      return this.admit(call, single)
    }
    const request = requestFor(call, permission, call.tool.confirm)
    let result: AuthorizeResult | Promise<AuthorizeResult>
    try {
      result = gate.authorize(request)
    } catch (error) {
      return ready(this.denied(call, `the permission check failed: ${messageOf(error)}`), single)
    }
    // Any answer but a plain `allow`, even `undefined` from a faulty gate, goes to the slow path that checks it.
    if (result && typeof (result as Promise<AuthorizeResult>).then !== 'function' && (result as AuthorizeResult).decision === 'allow') {
      call.span?.decided('allow', sourceKind((result as AuthorizeResult).rule))
      return this.admit(call, single)
    }
    const slow = this.authorizeSlowly(call, gate, request, result)
    return single ? slow.then(wrapOne) : slow
  }

  /** An asynchronous answer, an ask or a denial. */
  private async authorizeSlowly(
    call: ActiveCall,
    gate: PermissionGate,
    request: AuthorizeRequest,
    pending: AuthorizeResult | Promise<AuthorizeResult>,
  ): Promise<ToolResult> {
    call.waited = true
    try {
      const answer = await pending
      if (call.aborted) return this.finishAborted(call)
      const decision = answer?.decision
      if (!DECISIONS.has(decision)) {
        return this.denied(call, `the permission check returned no valid decision (got ${JSON.stringify(decision) ?? 'undefined'})`)
      }
      call.span?.decided(decision, sourceKind(answer.rule))
      // A call over its quota is refused before anyone is asked to approve it.
      if (decision !== 'deny' && this.counted(call)) {
        const refused = await this.reserve(call)
        if (refused) return refused
        if (call.aborted) return this.finishAborted(call)
      }
      if (decision === 'ask') {
        const asked = Date.now()
        let outcome: ApprovalOutcome | undefined
        try {
          const preview = call.tool.preview ? await previewOf(call, this.host.logger) : undefined
          if (call.aborted) return this.finishAborted(call)
          const edit = editorFor(call, this.limits.maxArgumentsLength, validatedEdits)
          outcome = await this.approval(call, gate, { ...request, callId: call.id, reason: request.permission.reason, ...(preview ? { preview } : {}), ...(edit ? { edit } : {}), ...(call.repaired ? { repaired: call.repaired } : {}) })
        } finally {
          call.waitedFor(asked)
        }
        // A request dropped because the call was cancelled ends `cancelled`, not `denied`.
        if (call.aborted) return this.finishAborted(call)
        const edited = outcome?.edited
        if (edited) {
          // Only an edit this call's editor validated runs, whatever the gate hands back.
          if (!validatedEdits.has(edited)) return this.denied(call, 'the permission service approved arguments the pipeline did not validate')
          call.revise(edited.input, edited.request.args, edited.changes)
        }
        if (outcome?.decision !== 'allow') return this.denied(call, outcome?.reason ?? 'the request was not approved')
      } else if (decision === 'deny') {
        return this.denied(call, answer.reason ?? 'a permission rule denies it')
      }
    } catch (error) {
      if (call.aborted) return this.finishAborted(call)
      return this.denied(call, `the permission check failed: ${messageOf(error)}`)
    }
    if (call.aborted) return this.finishAborted(call)
    return this.acquire(call, false)
  }

  /** The limits slot of a call allowed at once: its quota units, then its places to run. */
  private admit(call: ActiveCall, single: boolean): Promise<any> {
    if (!this.counted(call)) return this.acquire(call, single)
    const refused = this.reserve(call)
    if (!refused) return this.acquire(call, single)
    if (!isPromise(refused)) return ready(refused, single)
    const later = refused.then((result) => result ?? (call.aborted ? this.finishAborted(call) : this.acquire(call, false)))
    return single ? later.then(wrapOne) : later
  }

  /** Whether any quota may count the call: one is configured, and the tool is not the toolset's own `tool_search`. */
  private counted(call: ActiveCall): boolean {
    return this.host.quotas.active && !call.entry.uncounted
  }

  /**
   * Takes a unit of every quota on the call (`call.reservation`). A final result when the
   * call may not run: `rate_limited`, or `error` when the count could not be read (fail closed).
   */
  private reserve(call: ActiveCall): ToolResult | undefined | Promise<ToolResult | undefined> {
    let outcome: QuotaOutcome | Promise<QuotaOutcome>
    try {
      outcome = this.host.quotas.reserve(call.name, call.session)
    } catch (error) {
      return this.quotaFailed(call, error)
    }
    if (!isPromise(outcome)) return this.reserved(call, outcome)
    call.waited = true
    return outcome.then((settled) => this.reserved(call, settled), (error) => this.quotaFailed(call, error))
  }

  private reserved(call: ActiveCall, outcome: QuotaOutcome): ToolResult | undefined {
    if (!outcome) return undefined
    if ('refused' in outcome) return this.rateLimited(call, outcome)
    // Cancelled while a database counted: the unit goes back at once.
    if (call.aborted) {
      this.host.quotas.release(outcome)
      return this.finishAborted(call)
    }
    call.reservation = outcome
    return undefined
  }

  /** A quota is used up: the call does not run, and the refusal is a decision like the gate's. */
  private rateLimited(call: ActiveCall, refusal: QuotaRefusal): ToolResult {
    call.span?.decided('deny', 'quota')
    this.reportDecision(call, refusal.message, { kind: 'quota', name: refusal.name })
    return this.finish(call, 'rate_limited', refusal.message, 'rate_limited', refusal.retryAfterMs)
  }

  private quotaFailed(call: ActiveCall, error: unknown): ToolResult {
    this.host.logger.warn('the quota count of %s (%s) failed, so it did not run: %s', call.name, call.id, messageOf(error))
    return this.finish(call, 'error', `Error: the call did not run: its quota could not be counted (${messageOf(error)}).`, 'quota_unavailable')
  }

  /**
   * `maxRunning`: a place under each cap on the call's session, then the tool's own slot. A
   * call that waits keeps its timeout: past it, it ends `timed_out` without having run.
   */
  private acquire(call: ActiveCall, single: boolean): Promise<any> {
    const caps = this.host.caps
    if (!caps.active) return this.acquireTool(call, single)
    const held = caps.tryAcquire(call.session)
    if (held) {
      call.holdPlaces(caps, held)
      return this.acquireTool(call, single)
    }
    // Only a call that waits needs its signal (an AbortController costs more than the rest).
    call.waited = true
    this.waitClock(call, () => caps.describe(call.session))
    const later = caps.wait(call.session, call.signal).then(
      (places) => {
        call.holdPlaces(caps, places)
        // Aborted as the places came: `finishAborted` gives them back.
        if (call.aborted) return this.finishAborted(call)
        return this.acquireTool(call, false)
      },
      () => this.finishAborted(call),
    )
    return single ? later.then(wrapOne) : later
  }

  /** Bounds a call's wait to start by its timeout. */
  private waitClock(call: ActiveCall, why: () => string) {
    const timeout = Math.min(call.tool.traits.timeout, this.limits.timeout)
    if (call.waitTimer || !(timeout < 2 ** 31)) return
    call.waitTimer = setTimeout(() => call.abort('timed_out', `waited ${formatDuration(timeout)} for a place to run and did not start (${why()})`), timeout)
  }

  /** Takes a slot under the tool's concurrency cap, if it has one, then runs the handler. */
  private acquireTool(call: ActiveCall, single: boolean): Promise<any> {
    const limit = call.entry.limit
    if (!limit) return this.invoke(call, single)
    let waiting: Promise<void> | undefined
    try {
      waiting = limit.acquire(call.signal)
    } catch {
      return ready(this.finishAborted(call), single)
    }
    // Released when the handler settles, not when the model is answered: an adopted call
    // still occupies its slot while it runs in the background.
    if (!waiting) {
      call.release = () => limit.release()
      return this.invoke(call, single)
    }
    call.waited = true
    return waiting.then(
      () => {
        call.release = () => limit.release()
        return this.invoke(call, single)
      },
      () => single ? [this.finishAborted(call)] : this.finishAborted(call),
    )
  }

  /** A person's approval, in its own span when the call is traced. */
  private approval(call: ActiveCall, gate: PermissionGate, request: ApprovalRequest): Promise<ApprovalOutcome> {
    const span = call.span
    if (!span) return gate.approve(request, call.signal)
    return span.child('dogu.approval', () => gate.approve(request, call.signal)).then((outcome) => {
      span.decided('ask', sourceKind(outcome?.rule))
      return outcome
    })
  }

  /** Calls the handler (through the tool's middlewares) under the call's deadline; settles once, whatever happens later. */
  private invoke(call: ActiveCall, single: boolean): Promise<any> {
    if (call.waitTimer) clearTimeout(call.waitTimer)
    if (call.entry.disposed) {
      call.releaseSlot()
      return ready(this.finish(call, 'cancelled', `Cancelled: tool "${call.name}" was unloaded.`, 'cancelled'), single)
    }
    return new Promise<unknown>((resolve) => {
      call.sink = single ? (result) => resolve([result]) : resolve
      // A call that reached its handler without waiting (the common case) starts its clock
      // at `startedAt`, which saves a clock read; one that waited starts it now.
      call.runAt = call.waited ? Date.now() : call.startedAt
      // Handed over at start (MCP task mode): its deadline is now, so the timer adopts it at once.
      call.at = call.runAt + (this.limits.backgroundAtStart && call.tool.traits.background ? 0 : Math.min(call.tool.traits.timeout, this.limits.timeout))
      call.waitBeforeRun = call.waitMs
      this.host.running.add(call)
      const chain = this.host.middleware.chainFor(call.entry)
      if (chain) return new ChainRun(this, call, chain).start()
      let output: unknown
      try {
        output = runTool(call)
      } catch (error) {
        this.settleError(call, error)
        return
      }
      if (output && typeof (output as Promise<unknown>).then === 'function') {
        ;(output as Promise<unknown>).then(
          (value) => this.settleOutput(call, value),
          (error) => this.settleError(call, error),
        )
      } else {
        this.settleOutput(call, output)
      }
    })
  }

  private settleOutput(call: ActiveCall, output: unknown) {
    if (call.settled) return this.dropLate(call, 'result')
    this.settle(call, this.outputResult(call, output))
  }

  private settleError(call: ActiveCall, error: unknown) {
    if (call.settled) return this.dropLate(call, 'error')
    this.settle(call, this.errorResult(call, error))
  }

  private outputResult(call: ActiveCall, output: unknown): ToolResult {
    if (typeof output === 'string' && !call.entry.outputValidator) return this.callResult(call, 'ok', output)
    const { content, images, audio, resources, data, artifacts } = normalizeOutput(output)
    const outputValidator = call.entry.outputValidator
    let checked = data
    if (outputValidator) {
      const verdict = outputValidator(data)
      if (!verdict.ok) return this.callResult(call, 'error', `Error: the tool's result does not match its output schema (${verdict.issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}).`, 'output_invalid')
      checked = verdict.value
    }
    const result = this.callResult(call, 'ok', content)
    if (images) result.images = images
    if (audio) result.audio = audio
    if (resources) result.resources = resources
    if (checked !== undefined) result.data = checked
    if (artifacts) result.artifacts = artifacts
    return result
  }

  private errorResult(call: ActiveCall, error: unknown): ToolResult {
    if (call.aborted) return this.abortedResult(call)
    if (error instanceof ToolDenial) return this.callResult(call, 'denied', `Permission denied: ${error.reason}`, 'permission_denied')
    if (error instanceof ToolRateLimit) return this.limitedResult(call, error)
    this.host.logger.debug('tool %s failed: %s', call.name, error)
    return this.callResult(call, 'error', `Error: ${messageOf(error)}`, 'tool_error')
  }

  /** A tool's upstream refused for now (`ToolRateLimit`). */
  private limitedResult(call: ActiveCall, error: ToolRateLimit): ToolResult {
    const reason = String(error.reason)
    const result = this.callResult(call, 'rate_limited', reason.startsWith('Rate limited:') ? reason : `Rate limited: ${reason}`, 'rate_limited')
    const retry = error.retryAfterMs
    if (typeof retry === 'number' && Number.isFinite(retry) && retry > 0) result.retryAfterMs = Math.ceil(retry)
    return result
  }

  private settle(call: ActiveCall, result: ToolResult) {
    call.settled = true
    call.releaseSlot()
    if (call.reservation && !call.toolStarted) this.unreserve(call)
    this.host.running.done()
    result = this.finalized(result)
    // An adopted call already told the model it moved to the background; its end belongs
    // to the background service, not to `tools/call-end`.
    if (!call.adopted) this.report(call, result)
    call.sink!(result)
  }

  /**
   * The result as it leaves the pipeline: `redact`'s secrets replaced, then the content cut
   * to `maxContentLength` (in that order: a secret the cut split would leave its start behind).
   */
  private finalized(result: ToolResult): ToolResult {
    const redactor = this.host.redactor
    if (redactor.active) result = redactor.result(result)
    result.content = truncateContent(result.content, this.limits.maxContentLength)
    return result
  }

  /** The call ended: its span, then `tools/call-end`. */
  private report(call: ActiveCall, result: ToolResult) {
    call.span?.end(result)
    this.host.emit?.('tools/call-end', call, result)
  }

  // ChainHost: the middleware chain calls back into the pipeline through these.

  handler(call: ActiveCall): ToolResult | Promise<ToolResult> {
    let output: unknown
    try {
      output = runTool(call)
    } catch (error) {
      return call.passed = this.errorResult(call, error)
    }
    if (output && typeof (output as Promise<unknown>).then === 'function') {
      return call.handled = (output as Promise<unknown>).then((value) => this.passOn(call, this.outputResult(call, value)), (error) => this.passOn(call, this.errorResult(call, error)))
    }
    return call.passed = this.outputResult(call, output)
  }

  /** The tool's result, handed to the chain; straight to its end when every middleware passed the handler's promise on. */
  private passOn(call: ActiveCall, result: ToolResult): ToolResult {
    call.passed = result
    const run = call.chainRun
    if (run) {
      call.chainRun = undefined
      run.ended(result)
    }
    return result
  }

  chainEnded(call: ActiveCall, result: ToolResult): void {
    if (call.settled) return this.dropLate(call, 'result')
    this.settle(call, result)
  }

  traced(call: ActiveCall, by: RegisteredMiddleware, fn: () => ToolResult | Promise<ToolResult>): ToolResult | Promise<ToolResult> {
    return call.span ? call.span.child(`dogu.middleware ${by.name}`, async () => fn()) : fn()
  }

  rewrite(call: ActiveCall, args: unknown, by: RegisteredMiddleware): ToolResult | undefined | Promise<ToolResult | undefined> {
    const checked = checkRevision(call, args, this.limits.maxArgumentsLength)
    if ('problem' in checked) {
      switch (checked.problem) {
        case 'not-object': return this.middlewareFailed(call, by, 'it passed arguments that are not a JSON object')
        case 'not-json': return this.middlewareFailed(call, by, `it passed arguments that are not JSON: ${checked.detail}`)
        case 'too-long': return this.middlewareFailed(call, by, `its arguments are ${checked.detail}`)
        case 'invalid': return this.middlewareFailed(call, by, `it rewrote the arguments into ones the tool's schema refuses: ${checked.detail}`)
        case 'permission': return this.middlewareFailed(call, by, `the rewritten call's permission could not be worked out: ${checked.detail}`)
      }
    }
    // The same arguments in a new object are no rewrite.
    if (checked.json === JSON.stringify(call.args)) return undefined
    const before = call.permission
    call.rewrite(checked.input, checked.args, checked.permission)
    // Under the permission it was authorized for, the rewritten call needs no new decision.
    if (before && samePermission(before, checked.permission)) return undefined
    return this.reauthorize(call, by, checked.permission)
  }

  /** A rewrite changed the call's permission or target: a new request, which may ask or be denied. */
  private async reauthorize(call: ActiveCall, by: RegisteredMiddleware, permission: PermissionSpec): Promise<ToolResult | undefined> {
    const denied = (reason: string) => this.callResult(call, 'denied', `Permission denied: ${by.label} rewrote the call, and the rewritten call is denied: ${reason}`, 'permission_denied')
    const gate = this.host.permissions
    const effect = permission.effect ?? call.tool.traits.effect
    if (!gate) return effect === 'read' ? undefined : denied(`no permission service is loaded, so only read-only tools may run (the rewritten call has effect "${effect}")`)
    const request = requestFor(call, permission, call.tool.confirm)
    try {
      const answer = await gate.authorize(request)
      if (call.aborted) return this.abortedResult(call)
      const decision = answer?.decision
      if (!DECISIONS.has(decision)) return denied(`the permission check returned no valid decision (got ${JSON.stringify(decision) ?? 'undefined'})`)
      call.span?.decided(decision, sourceKind(answer.rule))
      if (decision === 'deny') return denied(answer.reason ?? 'a permission rule denies it')
      if (decision === 'allow') return undefined
      const asked = Date.now()
      let outcome: ApprovalOutcome | undefined
      try {
        const preview = call.tool.preview ? await previewOf(call, this.host.logger) : undefined
        if (call.aborted) return this.abortedResult(call)
        outcome = await this.approval(call, gate, { ...request, callId: call.id, reason: permission.reason, ...(preview ? { preview } : {}) })
      } finally {
        call.waitedFor(asked)
      }
      if (call.aborted) return this.abortedResult(call)
      return outcome?.decision === 'allow' ? undefined : denied(outcome?.reason ?? 'the request was not approved')
    } catch (error) {
      if (call.aborted) return this.abortedResult(call)
      return denied(`the permission check failed: ${messageOf(error)}`)
    }
  }

  resultOf(call: ActiveCall, value: unknown, by: RegisteredMiddleware): ToolResult {
    // The result `next` resolved with (the inner middlewares', or the tool's), passed on.
    if (value === call.passed && value) return value as ToolResult
    return call.passed = this.madeOf(call, value, by)
  }

  private madeOf(call: ActiveCall, value: unknown, by: RegisteredMiddleware): ToolResult {
    if (!value || typeof value !== 'object') return this.middlewareFailed(call, by, `it returned ${value === undefined ? 'nothing' : JSON.stringify(value)} instead of a result`)
    const returned = value as Partial<ToolResult> & { reason?: unknown }
    if (returned.status === 'denied' && typeof returned.reason === 'string') return this.middlewareDenied(call, by, returned.reason)
    if (!MIDDLEWARE_STATUSES.has(returned.status)) return this.middlewareFailed(call, by, `it returned a result with status ${JSON.stringify(returned.status)}`)
    if (typeof returned.content !== 'string') return this.middlewareFailed(call, by, 'it returned a result without a content string')
    // A replaced or transformed result: the call's identity and clock, the middleware's content.
    const result = this.result(call.id, call.name, returned.status!, returned.content, call.durationMs(), returned.code)
    if (returned.images) result.images = returned.images
    if (returned.audio) result.audio = returned.audio
    if (returned.resources) result.resources = returned.resources
    if (returned.data !== undefined) result.data = returned.data
    if (returned.artifacts) result.artifacts = returned.artifacts
    if (returned.status === 'rate_limited' && typeof returned.retryAfterMs === 'number') result.retryAfterMs = returned.retryAfterMs
    if (call.waitMs !== undefined) result.waitMs = call.waitMs
    return result
  }

  failure(call: ActiveCall, error: unknown, by: RegisteredMiddleware): ToolResult {
    if (error instanceof ToolDenial) return call.passed = this.middlewareDenied(call, by, error.reason)
    if (call.aborted) return call.passed = this.abortedResult(call)
    return call.passed = this.middlewareFailed(call, by, messageOf(error))
  }

  /** A middleware blocked the call: a decision like the gate's, reported as one. */
  private middlewareDenied(call: ActiveCall, by: RegisteredMiddleware, reason: string): ToolResult {
    call.span?.decided('deny', 'middleware')
    this.reportDecision(call, reason, { kind: 'middleware', name: by.name })
    return this.callResult(call, 'denied', `Permission denied: ${reason}`, 'permission_denied')
  }

  /** A denial made on the pipeline (a middleware, a quota), reported through the gate: the decision event, the audit log. */
  private reportDecision(call: ActiveCall, reason: string, source: PipelineDecision['source']) {
    const gate = this.host.permissions
    if (!gate?.reportDecision) return
    try {
      const request = requestFor(call, call.permission ?? call.entry.defaultPermission, call.tool.confirm)
      gate.reportDecision({ request, decision: 'deny', reason, source })
    } catch (error) {
      this.host.logger.warn('reporting the denial of %s by %s "%s" failed: %s', call.name, source.kind, source.name, messageOf(error))
    }
  }

  /** Gives back the quota units of a call that ended without its tool running. */
  private unreserve(call: ActiveCall) {
    const reservation = call.reservation!
    call.reservation = undefined
    this.host.quotas.release(reservation)
  }

  /** A middleware failed: an error result naming it. */
  private middlewareFailed(call: ActiveCall, by: RegisteredMiddleware, why: string): ToolResult {
    this.host.logger.warn('%s failed on %s (%s): %s', by.label, call.name, call.id, why)
    return this.callResult(call, 'error', `Error: ${by.label} failed: ${why}`, 'middleware_error')
  }

  private dropLate(call: ActiveCall, kind: string) {
    this.host.logger.debug('discarded the late %s of %s (%s) after it ended %s', kind, call.name, call.id, call.abortKind ?? 'already')
  }

  // CallHooks: the call object reports into the pipeline through these.

  progress(call: ActiveCall, message: string): void {
    const redactor = this.host.redactor
    this.host.emit?.('tools/call-progress', call, redactor.active ? redactor.text(message) : message)
  }

  async ask(call: ActiveCall, reason: string, preview?: ToolPreview): Promise<void> {
    const gate = this.host.permissions
    if (!gate) throw new ToolDenial(`no permission service is loaded to approve it (${reason})`)
    // A tool asking from inside `run` wants a person's answer now, not a remembered one.
    const request = requestFor(call, permissionOf(call), 'always')
    const asked = Date.now()
    let outcome: ApprovalOutcome | undefined
    try {
      const shown = normalizePreview(preview)
      outcome = await this.approval(call, gate, { ...request, callId: call.id, reason, ...(shown ? { preview: shown } : {}) })
    } finally {
      call.waitedFor(asked)
    }
    if (outcome?.decision !== 'allow') throw new ToolDenial(outcome?.reason ?? 'the request was not approved')
  }

  log(call: ActiveCall, level: LogLevel, data: unknown): void {
    if (!LOG_LEVEL_SET.has(level)) {
      this.host.logger.warn('tool %s logged at an unknown level %o; logged as "info" (levels: %s)', call.name, level, LOG_LEVELS.join(', '))
      level = 'info'
    }
    const redactor = this.host.redactor
    this.host.emit?.('tools/call-log', call, level, redactor.active ? redactor.value(data) : data)
  }

  async elicit(call: ActiveCall, form: ElicitationSchema, message: string, options?: ElicitOptions): Promise<Elicitation> {
    // A malformed form is the tool author's mistake: it throws, like a bad definition would.
    const question = elicitQuestion(form, message, options)
    const gate = this.host.permissions
    if (!gate) return { action: 'cancel', reason: 'no permission service is loaded to ask anyone' }
    const request = requestFor(call, permissionOf(call), 'always')
    const asked = Date.now()
    let outcome: ApprovalOutcome
    try {
      const signal = options?.signal ? AbortSignal.any([call.signal, options.signal]) : call.signal
      const ask = () => gate.approve({ ...request, callId: call.id, reason: message, elicit: question }, signal)
      outcome = await (call.span ? call.span.child('dogu.elicitation', ask) : ask())
    } finally {
      call.waitedFor(asked)
    }
    if (outcome.decision === 'allow' && outcome.by) return { action: 'accept', value: outcome.value, by: outcome.by }
    if (outcome.by && !outcome.dismissed) return outcome.reason ? { action: 'decline', reason: outcome.reason, by: outcome.by } : { action: 'decline', by: outcome.by }
    const withdrawn = options?.signal?.aborted && !call.signal.aborted
    return { action: 'cancel', reason: withdrawn ? 'the question was withdrawn' : outcome.reason ?? 'nobody answered' }
  }

  aborted(call: ActiveCall): void {
    // Only a running handler needs settling here; earlier stages check `call.aborted`.
    if (call.sink && !call.settled) this.settle(call, this.abortedResult(call))
  }

  expired(call: ActiveCall): void {
    if (call.settled || call.adopted || call.aborted) return
    const background = this.host.background
    if (call.tool.traits.background && background) {
      try {
        this.adopt(call, background)
        return
      } catch (error) {
        this.host.logger.warn('background service refused %s: %s', call.name, error)
      }
    }
    const seconds = Math.round(Math.min(call.tool.traits.timeout, this.limits.timeout) / 100) / 10
    call.abort('timed_out', `timed out after ${seconds}s`)
  }

  private adopt(call: ActiveCall, background: BackgroundPort) {
    const reply = call.sink!
    const later = new Promise<ToolResult>((resolve) => { call.sink = resolve })
    call.adopted = true
    let task: { id: string }
    try {
      task = background.adopt({
        callId: call.id,
        tool: call.name,
        session: call.session,
        args: call.args,
        startedAt: call.startedAt,
        result: later,
        cancel: (reason) => call.abort('cancelled', reason ?? 'the background task was cancelled'),
      })
    } catch (error) {
      call.adopted = false
      call.sink = reply
      throw error
    }
    const result = this.callResult(call, 'background', `The call is still running and continues in the background as task ${task.id}. Check it later with task_status({ "id": "${task.id}" }) or stop it with task_cancel.`, 'background')
    result.taskId = task.id
    this.report(call, result)
    reply(result)
  }

  private abortedResult(call: ActiveCall): ToolResult {
    const status = ABORT_STATUS[call.abortKind!]
    const label = status === 'timed_out' ? 'Timed out' : 'Cancelled'
    let content = `${label}: ${call.abortMessage}.`
    if (call.lastProgress) content += ` Last progress: ${call.lastProgress}`
    return this.callResult(call, status, content, status as ToolResultCode)
  }

  private finishAborted(call: ActiveCall): ToolResult {
    const result = this.finalized(this.abortedResult(call))
    this.ended(call)
    this.report(call, result)
    return result
  }

  private denied(call: ActiveCall, reason: string): ToolResult {
    return this.finish(call, 'denied', `Permission denied: ${reason}`, 'permission_denied')
  }

  private finish(call: ActiveCall, status: ToolStatus, content: string, code: ToolResultCode, retryAfterMs?: number): ToolResult {
    const made = this.callResult(call, status, content, code)
    if (retryAfterMs !== undefined) made.retryAfterMs = retryAfterMs
    const result = this.finalized(made)
    this.ended(call)
    this.report(call, result)
    return result
  }

  /** A call ends before its handler ran: what it took to start (quota units, places, its wait clock) goes back. */
  private ended(call: ActiveCall) {
    call.settled = true
    if (call.waitTimer) clearTimeout(call.waitTimer)
    call.releaseSlot()
    if (call.reservation) this.unreserve(call)
  }

  /** A call that never started: unknown tool or bad arguments (perhaps after a repair). */
  private reject(id: string, name: unknown, code: ToolResultCode, content: string, entry?: ToolEntry, repaired?: RepairRecord): ToolResult {
    const label = typeof name === 'string' ? name : String(name)
    const made = this.result(id, label, 'error', content, 0, code)
    if (repaired) made.repaired = repaired
    const result = this.finalized(made)
    // A call to a known tool with bad arguments is still a call its traces should show.
    if (entry && telemetry) telemetry.start({ id, name: label, tool: entry.tool })?.end(result)
    const emit = this.host.emit
    if (emit) {
      const info = { id, name: label, session: this.session, args: undefined, startedAt: Date.now() }
      emit('tools/call-start', info)
      emit('tools/call-end', info, result)
    }
    return result
  }

  /** A result for a call that was prepared: its run time, and the time it waited for a person if it did. */
  private callResult(call: ActiveCall, status: ToolStatus, content: string, code?: ToolResultCode): ToolResult {
    // The model is told a person changed its call, so it does not take the result for its own call's.
    if (call.edits && status !== 'denied') content = `${editNote(call.edits)}\n\n${content}`
    // And that its arguments were repaired, so it sends strict JSON next time.
    if (call.repaired) content = `${repairNote(call.repaired)}\n\n${content}`
    const result = this.result(call.id, call.name, status, content, call.durationMs(), code)
    if (call.waitMs !== undefined) result.waitMs = call.waitMs
    if (call.repaired) result.repaired = call.repaired
    return result
  }

  private result(id: string, name: string, status: ToolStatus, content: string, durationMs: number, code?: ToolResultCode): ToolResult {
    const result: ToolResult = { id, name, status, content, durationMs }
    if (code) result.code = code
    return result
  }

  private unknownMessage(name: unknown): string {
    if (typeof name !== 'string' || !name) return 'Unknown tool: the call has no tool name.'
    const close = closestNames(name, this.entries.keys())
    const hint = close.length ? ` Did you mean ${close.map((n) => `"${n}"`).join(', ')}?` : ''
    return `Unknown tool "${name}".${hint} Available tools: ${[...this.entries.keys()].slice(0, 20).join(', ')}${this.entries.size > 20 ? ', …' : ''}.`
  }
}

/** The tool's `run` for the call, inside the call's span when it is traced. */
function runTool(call: ActiveCall): unknown {
  // Its quota units are spent: the tool ran.
  if (call.reservation) call.toolStarted = true
  return call.span ? call.span.run(() => call.tool.run(call.input as any, call)) : call.tool.run(call.input as any, call)
}

/** The kind of what decided (`DecisionSource.kind`), for telemetry; a foreign gate's rule may have none. */
function sourceKind(rule: unknown): string | undefined {
  const kind = (rule as { kind?: unknown } | undefined)?.kind
  return typeof kind === 'string' ? kind : undefined
}

/** Whether a rewrite keeps the call under the permission it was authorized for: same name, target and effect. */
function samePermission(a: PermissionSpec, b: PermissionSpec): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b)
}

/**
 * The mode a call runs under, read once as it is prepared so `permission()` and `run()`
 * agree even if the session's mode changes while the call waits. A map lookup, no
 * allocation. Without a gate, or a gate without `modeOf`, it is `default`; so is an answer
 * that is not a mode or a `modeOf` that throws (the gate still decides the call itself).
 */
function modeFor(gate: PermissionGate | undefined, session: Session): PermissionMode {
  if (!gate?.modeOf) return 'default'
  try {
    const mode = gate.modeOf(session.id)
    return isPermissionMode(mode) ? mode : 'default'
  } catch {
    return 'default'
  }
}


/**
 * The tool's preview of this call, bounded, or a line saying why there is none: the person
 * asked is never left without knowing that the tool meant to show something.
 */
async function previewOf(call: ActiveCall, logger: Logger): Promise<Readonly<ToolPreview> | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined
  let onAbort: (() => void) | undefined
  const late = Symbol('late')
  try {
    // Bounded by the preview timeout and by the call: a hung preview never holds the question.
    const stopped = new Promise<typeof late>((resolve) => {
      timer = setTimeout(() => resolve(late), PREVIEW_TIMEOUT)
      onAbort = () => resolve(late)
      call.signal.addEventListener('abort', onAbort, { once: true })
    })
    const shown = await Promise.race([Promise.resolve().then(() => call.tool.preview!(call.input as any, call)), stopped])
    if (shown === late) return call.aborted ? undefined : { text: `(no preview: the tool's preview took over ${PREVIEW_TIMEOUT / 1000} s)` }
    return normalizePreview(shown)
  } catch (error) {
    logger.warn('the preview of tool %s failed: %s', call.name, messageOf(error))
    return { text: `(no preview: ${messageOf(error)})` }
  } finally {
    clearTimeout(timer)
    call.signal.removeEventListener('abort', onAbort!)
  }
}


const wrapOne = (result: ToolResult) => [result]

/** The line a model reads first when its arguments were repaired. */
function repairNote(repaired: RepairRecord): string {
  return `Note: your arguments were not valid JSON; they were repaired (${repaired.steps.join(', ')}) before the call ran. Send strict JSON.`
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return !!value && typeof (value as Promise<T>).then === 'function'
}

function ready(result: ToolResult, single: boolean): Promise<unknown> {
  return Promise.resolve(single ? [result] : result)
}
