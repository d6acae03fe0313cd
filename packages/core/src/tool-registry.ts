import type { BackgroundPort } from './background-port'
import type { PipelineHost, PipelineLimits } from './call-pipeline'
import type { ActiveCall } from './active-call'
import { defineTool, isTool } from './define-tool'
import { DoguError } from './errors'
import type { EmitFunction } from './events'
import { type ToolSource, unavailableSources } from './tool-source'
import { type Logger, silentLogger } from './logger'
import { compileNameGlobs } from './name-matcher'
import { RunningCalls } from './running-calls'
import { type RedactOptions, Redactor } from './redaction/redactor'
import { MiddlewareStack } from './middleware/middleware-stack'
import { QuotaBook } from './quotas/quota-book'
import type { MaxRunning, QuotaRule } from './quotas/quota-rule'
import type { QuotaStore } from './quotas/quota-store'
import { RunningCaps } from './quotas/running-caps'
import type { MiddlewareOptions, ToolMiddleware } from './middleware/tool-middleware'
import type { PermissionGate } from './permission-gate'
import type { ResumeHandler } from './permissions/pending-record'
import { ResumeCalls } from './pipeline/resume-call'
import { messageOf } from './error-message'
import { ToolSearchIndex } from './search'
import type { Session } from './session'
import type { Tool, ToolOptions } from './tool'
import type { ModelToolCall } from './tool-call'
import { ToolEntry } from './tool-entry'
import type { ToolResult } from './tool-result'
import { type ExecuteOptions, Toolset, type ToolsetOptions } from './toolset'
import type { AbortCause } from './result-params'

export interface ToolRegistryOptions {
  /** Receives `tools/*` events. */
  emit?: EmitFunction
  logger?: Logger
  /** Defaults for every toolset. */
  limits?: Partial<PipelineLimits>
  /** What is replaced with `[redacted]` in results and progress (see `Redactor`). */
  redact?: RedactOptions
  /**
   * Calls that may start running per window, per chat user, channel, guild, session or for
   * everyone; a call over one ends `rate_limited`. See `QuotaRule`.
   */
  quotas?: QuotaRule[]
  /** Where quota counts live at first. @default memory (switch later with `quotas.useStore`) */
  quotaStore?: QuotaStore
  /** Caps on calls running at once, per session, per user and for the process; calls beyond one wait. */
  maxRunning?: MaxRunning
  /**
   * Repairs malformed JSON arguments (trailing commas, single quotes, a Markdown fence, …)
   * instead of refusing them, when the repair cannot change what they mean. @default true
   */
  repair?: boolean
}

/** The owner used when `define` is called without one. */
const ANONYMOUS = { name: 'anonymous' }

/**
 * All tools the process knows, with their owners. Hosts wrap it (`ctx.tools` on Cordis);
 * agents work with the toolsets it makes.
 */
export class ToolRegistry implements PipelineHost {
  /** The background service, when one is loaded. */
  background: BackgroundPort | undefined
  readonly emit: EmitFunction | undefined
  readonly logger: Logger
  readonly running = new RunningCalls<ActiveCall>()
  /** Replaces secrets in every result and progress line before anyone sees them. */
  readonly redactor: Redactor
  /** The middlewares `use` added. */
  readonly middleware = new MiddlewareStack()
  /** The configured quotas and their counts: `status(session)` is what `dogu.quota` shows. */
  readonly quotas: QuotaBook
  /** `maxRunning`'s caps. */
  readonly caps: RunningCaps
  /** Whether malformed arguments are repaired (`repair`, on by default). */
  readonly repair: boolean
  private entries = new Map<string, ToolEntry>()
  private _sources = new Set<ToolSource>()
  private sorted: ToolEntry[] | undefined
  private limits: PipelineLimits
  private _version = 0
  /** Built by the first toolset that defers a tool, then kept in step with define/dispose. */
  private index: ToolSearchIndex | undefined
  private gate: PermissionGate | undefined
  /** What runs this registry's calls answered after a restart; made when a gate takes one. */
  private resumer: ResumeCalls | undefined
  /** Removes `resumer` from the gate it was registered on. */
  private stopResuming: (() => void) | undefined

  constructor(options: ToolRegistryOptions = {}) {
    this.emit = options.emit
    const logger = options.logger ?? silentLogger
    // Defaults apply to unset and undefined limits alike (a config form leaves undefined).
    const { maxContentLength = 50_000, maxArgumentsLength = 1_000_000, timeout = Infinity } = options.limits ?? {}
    this.limits = { maxContentLength, maxArgumentsLength, timeout }
    this.redactor = new Redactor(options.redact, logger)
    this.quotas = new QuotaBook(options.quotas, { store: options.quotaStore, logger })
    this.caps = new RunningCaps(options.maxRunning)
    this.repair = options.repair !== false
    // A tool's error, logged, may quote a secret: the registry's lines are redacted too.
    this.logger = this.redactor.logger(logger)
  }

  /**
   * The permission service, when one is loaded. Without it, only `read` tools run. A gate
   * that resumes calls (`onResume`: a `PermissionEngine` with `durable` on) is given this
   * registry's `ResumeHandler` as it is set, and it is taken back when the gate is replaced
   * or removed: an answer given after a restart then runs its call here, once.
   */
  get permissions(): PermissionGate | undefined {
    return this.gate
  }

  set permissions(gate: PermissionGate | undefined) {
    if (gate === this.gate) return
    const stop = this.stopResuming
    this.stopResuming = undefined
    stop?.()
    this.gate = gate
    this.resumeOn(gate)
  }

  /**
   * Registers the resume handler on `gate`, when it takes one. Again as a tool is defined:
   * a question restored before the tool was gets the tool's edit form then.
   */
  private resumeOn(gate: PermissionGate | undefined) {
    const onResume = (gate as ResumingGate | undefined)?.onResume
    if (typeof onResume !== 'function') return
    this.resumer ??= new ResumeCalls({ pipeline: this, limits: this.limits, entry: (name) => this.entries.get(name) })
    try {
      const removal = onResume.call(gate, this.resumer)
      if (typeof removal === 'function') this.stopResuming = removal
    } catch (error) {
      // An engine without a pending store (`durable: false`) has nothing to resume.
      this.logger.debug('the permission service resumes no calls: %s', messageOf(error))
    }
  }

  /** Increases on every change; caches key on it. */
  get version(): number {
    return this._version
  }

  /**
   * Registers a tool for `owner` and returns its disposer. The same owner may redefine a
   * name (it replaces the old tool); another live owner's name is a `NAME_CONFLICT`.
   */
  define(tool: Tool | ToolOptions, owner: object = ANONYMOUS, ownerName = nameOf(owner)): () => void {
    const checked = isTool(tool) ? tool : defineTool(tool as ToolOptions)
    const existing = this.entries.get(checked.name)
    if (existing && existing.owner !== owner) {
      throw new DoguError('NAME_CONFLICT', `tool "${checked.name}" is already defined by ${existing.ownerName}; ${ownerName} cannot define it too`)
    }
    const entry = new ToolEntry(checked, owner, ownerName)
    if (existing) this.retire(existing, { cause: 'unloaded', tool: checked.name, replaced: true })
    this.entries.set(checked.name, entry)
    this.index?.add(checked)
    this.changed()
    if (this.stopResuming) this.resumeOn(this.gate)
    return () => {
      if (entry.disposed) return
      if (this.entries.get(checked.name) === entry) {
        this.entries.delete(checked.name)
        this.index?.remove(checked.name)
      }
      this.retire(entry, { cause: 'unloaded', tool: checked.name })
      this.changed()
    }
  }

  /**
   * Adds a middleware around every call it matches (`options.tools`), after validation and
   * authorization, and returns its disposer. Middlewares run by `order` (lower outside),
   * then in registration order. See `ToolMiddleware`.
   *
   * @example
   * registry.use(async (call, next) => {
   *   const result = await next()
   *   return { ...result, content: result.content.replaceAll(token, '[redacted]') }
   * }, { name: 'hide-token', tools: 'http_*' })
   */
  use(middleware: ToolMiddleware, options?: MiddlewareOptions, ownerName?: string): () => void {
    return this.middleware.use(middleware, options, ownerName)
  }

  /** Removes every tool of `owner` (a plugin being disposed); returns how many. */
  disposeOwner(owner: object): number {
    let count = 0
    for (const [name, entry] of this.entries) {
      if (entry.owner !== owner) continue
      this.entries.delete(name)
      this.index?.remove(name)
      this.retire(entry, { cause: 'unloaded', tool: name })
      count++
    }
    if (count) this.changed()
    return count
  }

  get(name: string): Tool | undefined {
    return this.entries.get(name)?.tool
  }

  has(name: string): boolean {
    return this.entries.has(name)
  }

  /** The owner's name of a tool, for UIs and error messages. */
  ownerOf(name: string): string | undefined {
    return this.entries.get(name)?.ownerName
  }

  /** All tools, sorted by name. */
  list(): Tool[] {
    return this.sortedEntries().map((entry) => entry.tool)
  }

  /**
   * Tools filtered by name globs, sorted by name (ChatLuna's `filter`): not bound to a
   * session, so `visibility` is not applied.
   */
  filter(options: { include?: string[]; exclude?: string[] } = {}): Tool[] {
    return this.selectByName(options).map((entry) => entry.tool)
  }

  /**
   * Registers a source of tools (an imported MCP server) for the consoles and for
   * `toolset.unavailable()`; its tools are defined on their own. Returns the disposer.
   */
  addSource(source: ToolSource): () => void {
    if (!source || typeof source.name !== 'string' || typeof source.kind !== 'string') throw new DoguError('INVALID_OPTIONS', 'addSource() needs { name, kind, status, tools }')
    for (const other of this._sources) {
      if (other.kind === source.kind && other.name === source.name) throw new DoguError('INVALID_OPTIONS', `a ${source.kind} source named "${source.name}" is already registered`)
    }
    this._sources.add(source)
    return () => {
      this._sources.delete(source)
    }
  }

  /** The registered sources, by kind then name. */
  sources(): ToolSource[] {
    return [...this._sources].sort((a, b) => a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name))
  }

  /** A finalized toolset for one session: see `ToolsetOptions`. */
  toolset(options: ToolsetOptions): Toolset {
    if (!options || typeof options !== 'object' || !options.session || typeof options.session.id !== 'string') {
      throw new DoguError('INVALID_OPTIONS', 'toolset() needs { session: { id: string, ... } }')
    }
    const { session } = options
    const groups = new Set(options.groups ?? [])
    const selected: ToolEntry[] = []
    for (const entry of this.selectByName(options)) {
      const { tool } = entry
      if (tool.groups.length && !tool.groups.some((group) => groups.has(group))) continue
      if (tool.visibility && !this.visible(tool, session)) continue
      selected.push(entry)
    }
    return new Toolset(this, selected, options, this.limits, () => this.searchIndex(), unavailableSources(this._sources), (other) => this.toolset({ ...options, session: other }))
  }

  /** Entries in name order, kept by `include` globs (all when none) and dropped by `exclude`. */
  private selectByName({ include, exclude }: { include?: string[]; exclude?: string[] }): ToolEntry[] {
    const sorted = this.sortedEntries()
    if (!include?.length && !exclude?.length) return sorted
    const kept = include?.length ? compileNameGlobs(include) : undefined
    const dropped = exclude?.length ? compileNameGlobs(exclude) : undefined
    return sorted.filter(({ tool }) => (!kept || kept(tool.name)) && !dropped?.(tool.name))
  }

  /** The index `tool_search` ranks with, over every registered tool. */
  private searchIndex(): ToolSearchIndex {
    if (!this.index) {
      this.index = new ToolSearchIndex()
      for (const { tool } of this.entries.values()) this.index.add(tool)
    }
    return this.index
  }

  /** Shortcut: a toolset for `options` and its `execute`. */
  execute(calls: readonly ModelToolCall[], options: ToolsetOptions & ExecuteOptions): Promise<ToolResult[]> {
    return this.toolset(options).execute(calls, options)
  }

  /** Aborts every call in flight and stops the timer; the registry stays usable. */
  dispose(): void {
    for (const call of this.running.active()) call.abort('disposed', { cause: 'unloaded' })
    this.running.clear()
  }

  private visible(tool: Tool, session: Session): boolean {
    try {
      return !!tool.visibility!(session)
    } catch (error) {
      // A broken visibility check hides the tool rather than exposing it.
      this.logger.warn('visibility() of tool %s threw: %s', tool.name, error)
      return false
    }
  }

  private retire(entry: ToolEntry, cause: AbortCause) {
    entry.disposed = true
    for (const call of this.running.active()) if (call.entry === entry) call.abort('disposed', cause)
  }

  private sortedEntries(): ToolEntry[] {
    return this.sorted ??= [...this.entries.values()].sort((a, b) => (a.tool.name < b.tool.name ? -1 : 1))
  }

  private changed() {
    this._version++
    this.sorted = undefined
    this.emit?.('tools/changed')
  }
}

/** A gate that runs answers given after a restart through the tools host (`PermissionEngine.onResume`). */
interface ResumingGate extends PermissionGate {
  onResume?(handler: ResumeHandler): () => void
}

function nameOf(owner: object): string {
  const name = (owner as { name?: unknown }).name
  return typeof name === 'string' && name ? `plugin "${name}"` : 'another plugin'
}
