import type { Dialect, Loosening } from '@dogu/schema'
import { onAbort } from './abort-fanout'
import { ActiveCall } from './active-call'
import type { CallDecision } from './call-decision'
import type { AskAnswer } from './permissions/asker'
import { BatchScheduler } from './batch-scheduler'
import { CallPipeline, type PipelineHost, type PipelineLimits } from './call-pipeline'
import { DoguError } from './errors'
import { compileNameGlobs } from './name-matcher'
import { createToolSearchTool, type SummaryStyle, TOOL_SEARCH_NAME, type ToolSearchIndex } from './search'
import type { Session } from './session'
import type { Tool } from './tool'
import type { ModelToolCall } from './tool-call'
import { type DefinitionMap, toolDefinition } from './tool-definition'
import { ToolEntry } from './tool-entry'
import { dialectOf } from './tool-json-schema'
import type { AbortCause } from './result-params'
import type { ToolResult } from './tool-result'
import type { UnavailableSource } from './tool-source'

const BATCH_CANCELLED: AbortCause = Object.freeze({ cause: 'batch' })

const NONE: readonly string[] = Object.freeze([])

/** How a host picks the tools for one conversation. */
export interface ToolsetOptions {
  session: Session
  /** Name globs to keep (minimatch). @default all */
  include?: string[]
  /** Name globs to drop, applied after `include`. */
  exclude?: string[]
  /** Groups to enable; ungrouped tools are always in. */
  groups?: string[]
  /** Locale for i18n descriptions in definitions. */
  locale?: string
  /** Lowers every tool's timeout in this toolset (milliseconds). */
  timeout?: number
  /**
   * Hands every call of a tool with `background` to the background service as soon as its
   * handler starts, and answers with the task (`status: 'background'`): what an MCP client's
   * task mode asks for. Waits before the start (approval, a place to run) keep their bounds.
   * Without a background service loaded, calls time out as usual. @default false
   */
  backgroundAtStart?: boolean
  /** Parallel-safe calls of one batch that may run at once. @default 8 */
  concurrency?: number
  /** Content longer than this is cut with a marker. @default 50_000 */
  maxContentLength?: number
  /** JSON arguments longer than this are refused. @default 1_000_000 */
  maxArgumentsLength?: number
  /**
   * `search` defers every tool behind `tool_search` except the `eager` ones; otherwise only
   * tools defined with `mode: 'search'` are deferred. Deferred tools stay callable.
   * @default 'eager'
   */
  mode?: 'eager' | 'search'
  /** Name globs of tools never deferred, whatever their mode. */
  eager?: string[]
  /** How `tool_search`'s description lists the deferred tools. @default 'brief' */
  summary?: SummaryStyle
  /**
   * The dialect the model sees: `tool_search` answers in it, and fields that dialect sends
   * JSON-encoded (Gemini's dicts, `any`, …) are decoded from calls before validation. Unset:
   * the dialect of the last `definitions()` call, which is what a host sending one
   * provider's definitions wants. Set it when one toolset serves several providers.
   */
  dialect?: Dialect
}

export interface ExecuteOptions {
  /** Cancels every call of the batch still in flight. */
  signal?: AbortSignal
  /**
   * Answers already given, by call id: a framework that asked its own user whether a call
   * may run (the AI SDK's tool approval, an OpenAI Agents interruption; see `decide`) passes
   * the answer here. The call is authorized again as it is made; only when the engine would
   * ask about it is this taken as the answer, checked like any asker's (who may give it, its
   * `scope`), remembered and audited as such (`via` names the framework). A call the rules
   * now allow or deny ignores it.
   */
  answers?: Readonly<Record<string, AskAnswer>>
}

/**
 * A finalized toolset: an immutable snapshot whose definitions and whose dispatch map come
 * from the same entries. What it advertises is exactly what it can call.
 */
export class Toolset {
  readonly session: Session
  private entries: ReadonlyMap<string, ToolEntry>
  /** What `definitions` lists: the eager tools, then `tool_search` when any are deferred. */
  private advertised: ToolEntry[]
  private deferredNames: string[] = []
  /** The dialect definitions were last asked in: `tool_search` answers in it too. */
  private dialect: Dialect
  private fixedDialect: boolean
  private pipeline: CallPipeline
  private poolSize: number
  private locale?: string
  private cache = new Map<Dialect, readonly unknown[]>()
  /** Encoded argument paths per tool, for `encodedDialect`. */
  private encoded = new Map<ToolEntry, readonly string[]>()
  private encodedDialect?: Dialect

  private readonly missing: readonly UnavailableSource[]
  /** The registry's `toolset()` with this one's options, for `forSession`. */
  private readonly remake?: (session: Session) => Toolset

  /** @internal Created by `ToolRegistry.toolset()`. */
  constructor(host: PipelineHost, entries: ToolEntry[], options: ToolsetOptions, limits: PipelineLimits, searchIndex?: () => ToolSearchIndex, missing: readonly UnavailableSource[] = [], remake?: (session: Session) => Toolset) {
    if (remake) this.remake = remake
    this.missing = Object.freeze(missing.map((source) => Object.freeze({ ...source })))
    this.session = Object.freeze({ ...options.session })
    this.dialect = options.dialect ?? 'json'
    this.fixedDialect = !!options.dialect
    const map = new Map(entries.map((entry) => [entry.tool.name, entry]))
    this.advertised = entries
    const pinned = options.eager?.length ? compileNameGlobs(options.eager) : undefined
    const deferred = searchIndex
      ? entries.filter(({ tool }) => (options.mode === 'search' || tool.mode === 'search') && !pinned?.(tool.name))
      : []
    if (deferred.length) {
      const set = new Set(deferred)
      this.deferredNames = deferred.map((entry) => entry.tool.name)
      const search = new ToolEntry(createToolSearchTool({
        index: searchIndex!(),
        tools: deferred.map((entry) => entry.tool),
        summary: options.summary,
        definitionsOf: (names) => names.map((name) => this.definitionOf(map.get(name)!, this.dialect)),
      }), this, 'the toolset')
      search.uncounted = true
      // The built-in takes the name over from a registered tool in a toolset that defers.
      this.advertised = [...entries.filter((entry) => !set.has(entry) && entry.tool.name !== TOOL_SEARCH_NAME), search]
      map.set(TOOL_SEARCH_NAME, search)
    }
    this.entries = map
    this.poolSize = options.concurrency ?? 8
    this.locale = options.locale
    this.pipeline = new CallPipeline(host, this.entries, this.session, {
      maxContentLength: options.maxContentLength ?? limits.maxContentLength,
      maxArgumentsLength: options.maxArgumentsLength ?? limits.maxArgumentsLength,
      timeout: Math.min(options.timeout ?? Infinity, limits.timeout),
      ...(options.backgroundAtStart ? { backgroundAtStart: true } : {}),
    }, (entry) => this.encodedPaths(entry))
  }

  /**
   * This toolset for another session: what the registry's `toolset()` makes with this one's
   * options for `session` (the tools registered now that it may see), its calls keyed to
   * `session` (its grants, mode, quotas and audit records), reading calls in the dialect
   * this one was last asked for. What a framework adapter uses when the framework names the
   * run's thread or conversation.
   */
  forSession(session: Session): Toolset {
    if (!session || typeof session !== 'object' || typeof session.id !== 'string') throw new DoguError('INVALID_OPTIONS', 'forSession() needs a session { id: string, ... }')
    if (!this.remake) throw new DoguError('INVALID_OPTIONS', 'forSession() needs a toolset made by a registry (registry.toolset() or ctx.tools.toolset())')
    const copy = this.remake(session)
    copy.dialect = this.dialect
    return copy
  }

  /**
   * What would become of a call if it were made now: parsed (repaired), validated and
   * decided by the permission service, but not asked, run, counted or audited. What a
   * framework's `needsApproval` asks: `ask` means a person must approve it (the framework
   * asks its user and hands the answer to `execute` as `answers`); `allow` and `deny` are
   * decided again when it is made; `invalid`: `execute` says why it cannot run.
   */
  decide(call: ModelToolCall): CallDecision | Promise<CallDecision> {
    return this.pipeline.decide(call)
  }

  /** Tool names in definition order. */
  get names(): string[] {
    return [...this.entries.keys()]
  }

  get size(): number {
    return this.entries.size
  }

  /** Tools behind `tool_search`: callable, but not in `definitions`. */
  get deferred(): string[] {
    return [...this.deferredNames]
  }

  /**
   * The sources whose tools this toolset lacks because they were not connected when it was
   * made (an imported MCP server waiting for authorization, one reconnecting), with why:
   * an agent can tell the model, a console can tell the owner.
   */
  unavailable(): readonly UnavailableSource[] {
    return this.missing
  }

  has(name: string): boolean {
    return this.entries.has(name)
  }

  get(name: string): Tool | undefined {
    return this.entries.get(name)?.tool
  }

  /**
   * Definitions in a provider's format, in a stable order (prompt caches depend on it).
   * Computed once per tool and dialect while the tool stays registered.
   */
  definitions<D extends Dialect = 'json'>(dialect: D = 'json' as D): readonly DefinitionMap[D][] {
    let list = this.cache.get(dialect)
    if (!list) {
      list = Object.freeze(this.advertised.map((entry) => this.definitionOf(entry, dialect)))
      this.cache.set(dialect, list)
    }
    if (!this.fixedDialect) this.dialect = dialect
    return list as readonly DefinitionMap[D][]
  }

  /**
   * Full definitions of the named tools, deferred ones included, in the order given: what a
   * host adds to the tools it sends after `tool_search` returned them (names from
   * `ToolSearchData.matches`). The same frozen objects every time, so a request that adds
   * them stays byte-identical while nothing changes. Names the toolset lacks are skipped.
   */
  definitionsOf<D extends Dialect>(names: readonly string[], dialect: D): DefinitionMap[D][] {
    const list: DefinitionMap[D][] = []
    for (const name of names) {
      const entry = this.entries.get(name)
      if (entry) list.push(this.definitionOf(entry, dialect) as DefinitionMap[D])
    }
    return list
  }

  /**
   * Where each tool's definition in `dialect` says less than its schema: for every tool that
   * was loosened, the paths and the exact rules the provider's form cannot state (a dict for
   * OpenAI strict mode, a tagged union flattened into one object, a field Gemini receives as
   * JSON text, …). Calls are still checked against the exact schema, so a model that sends
   * what the loosened form allows but the schema refuses gets an error naming the real rule.
   * Tools defined exactly in `dialect` are not listed. Deferred tools are included.
   *
   * @example toolset.loosened('gemini') // { fetch: [{ path: '$.headers', rule: 'sent as a JSON-encoded string of …' }] }
   */
  loosened(dialect: Dialect): Record<string, readonly Loosening[]> {
    const result: Record<string, readonly Loosening[]> = {}
    for (const [name, entry] of this.entries) {
      const { loosened } = dialectOf(entry.tool.args, this.locale, dialect)
      // defineProperty: a tool may be named `__proto__`-like text, and must stay a plain key.
      if (loosened.length) Object.defineProperty(result, name, { value: loosened, enumerable: true, writable: false, configurable: false })
    }
    return result
  }

  /** The paths a call's arguments carry JSON-encoded, in the dialect the model was shown. */
  private encodedPaths(entry: ToolEntry): readonly string[] {
    if (this.dialect === 'json') return NONE
    // Every call asks: one lookup here rather than the conversion caches' four.
    if (this.encodedDialect !== this.dialect) {
      this.encoded.clear()
      this.encodedDialect = this.dialect
    }
    let paths = this.encoded.get(entry)
    if (!paths) this.encoded.set(entry, paths = dialectOf(entry.tool.args, this.locale, this.dialect).encoded)
    return paths
  }

  private definitionOf(entry: ToolEntry, dialect: Dialect): unknown {
    const key = `${dialect}:${this.locale ?? ''}`
    let definition = entry.definitions.get(key)
    if (!definition) {
      definition = Object.freeze(toolDefinition(entry.tool, dialect, this.locale))
      entry.definitions.set(key, definition)
    }
    return definition
  }

  /**
   * Runs the model's calls: one result per call, in the calls' order. Never throws for a
   * bad call; parallel-safe calls run together, the others alone.
   */
  execute(calls: readonly ModelToolCall[], options: ExecuteOptions = {}): Promise<ToolResult[]> {
    if (!Array.isArray(calls)) return Promise.reject(new DoguError('INVALID_OPTIONS', 'execute() expects an array of tool calls'))
    const { signal, answers } = options
    if (answers !== undefined && (!answers || typeof answers !== 'object')) return Promise.reject(new DoguError('INVALID_OPTIONS', 'execute() expects answers as an object of answers by call id'))
    if (calls.length === 1) {
      const prepared = this.pipeline.prepare(calls[0])
      if (!(prepared instanceof ActiveCall)) return Promise.resolve([prepared])
      if (answers) takeAnswer(prepared, answers)
      return signal ? this.runAloneUntil(prepared, signal) : this.pipeline.runAlone(prepared)
    }
    return this.executeBatch(calls, signal, answers)
  }

  /**
   * A batch of one with a signal: what a framework sends for each of its tool calls, so
   * it skips the batch's scheduler (one call waits behind no other) and its async frame.
   */
  private runAloneUntil(call: ActiveCall, signal: AbortSignal): Promise<ToolResult[]> {
    if (signal.aborted) call.abort('cancelled', BATCH_CANCELLED)
    const unsubscribe = onAbort(signal, () => {
      if (!call.settled && !call.adopted) call.abort('cancelled', BATCH_CANCELLED)
    })
    const running = this.pipeline.runAlone(call)
    running.then(unsubscribe, unsubscribe)
    return running
  }

  private async executeBatch(calls: readonly ModelToolCall[], signal?: AbortSignal, answers?: Readonly<Record<string, AskAnswer>>): Promise<ToolResult[]> {
    const results: ToolResult[] = new Array(calls.length)
    const active: ActiveCall[] = []
    const cancel = () => {
      for (const call of active) if (!call.settled && !call.adopted) call.abort('cancelled', BATCH_CANCELLED)
    }
    const unsubscribe = signal ? onAbort(signal, cancel) : undefined
    try {
      const scheduler = new BatchScheduler(this.poolSize)
      const pending: Promise<unknown>[] = []
      for (let i = 0; i < calls.length; i++) {
        const prepared = this.pipeline.prepare(calls[i])
        if (!(prepared instanceof ActiveCall)) {
          results[i] = prepared
          continue
        }
        active.push(prepared)
        if (answers) takeAnswer(prepared, answers)
        if (signal?.aborted) prepared.abort('cancelled', BATCH_CANCELLED)
        // Behind the batch gate a call may wait: its deadline starts when it runs.
        prepared.waited = true
        pending.push(scheduler
          .schedule(prepared.tool.traits.parallel, () => this.pipeline.run(prepared))
          .then((result) => { results[i] = result }))
      }
      await Promise.all(pending)
    } finally {
      unsubscribe?.()
    }
    return results
  }
}

/** The answer given for this call's id, if any, kept on the call (a copy: the caller's object may change). */
function takeAnswer(call: ActiveCall, answers: Readonly<Record<string, AskAnswer>>): void {
  const answer = Object.hasOwn(answers, call.id) ? answers[call.id] : undefined
  if (answer && typeof answer === 'object') call.answer = Object.freeze({ ...answer })
}
