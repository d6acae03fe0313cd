import {
  DoguError,
  type MaxRunning,
  QUOTA_SCOPES,
  type QuotaRule,
  type ExecuteOptions,
  type MiddlewareOptions,
  type ModelToolCall,
  type Tool,
  type ToolEvents,
  type ToolMiddleware,
  type ToolOptions,
  type ToolSource,
  type RedactOptions,
  ToolRegistry,
  type ToolResult,
  type Toolset,
  type ToolsetOptions,
} from '@dogu/core'
import { type Context, Service } from 'cordis'
import Schema from 'schemastery'
import { eventEmitter } from './cordis-events'
import { cordisLogger } from './cordis-logger'

declare module 'cordis' {
  interface Context {
    tools: ToolService
  }

  // Cordis' own event table, extended with the runtime's: `ctx.on('tools/call-end', …)`.
  interface Events<in C extends Context = Context> extends ToolEvents {}
}

/**
 * `ctx.tools`: the tool registry of a Cordis app. Plugins define tools through it; agent
 * hosts take toolsets from it.
 *
 * Methods called as `ctx.tools.x()` see the caller's context as `this.ctx` (Cordis'
 * tracker), which is how `define` ties a tool to the plugin that defined it.
 */
export class ToolService extends Service {
  static Config: Schema<ToolService.Config> = Schema.object({
    maxContentLength: Schema.natural().min(1).default(50_000)
      .description('Longest result content, in characters, before it is cut with a marker.'),
    maxArgumentsLength: Schema.natural().min(1).default(1_000_000)
      .description('Longest JSON arguments string a call may carry.'),
    timeout: Schema.natural().min(1).role('ms')
      .description('Upper bound on every tool\'s timeout, in milliseconds. Unset: each tool\'s own timeout.'),
    redact: Schema.object({
      env: Schema.array(String).description('Environment variables whose values are replaced with [redacted] in every result and progress line.'),
      patterns: Schema.array(String).description('Regular expressions whose matches are replaced with [redacted] (run on a linear-time engine).'),
      builtin: Schema.boolean().default(true).description('Also redact the secrets Dogu holds: MCP headers and tokens, the console token.'),
    }).description('Secrets kept out of what the model, the logs and the console see.'),
    quotas: Schema.array(Schema.object({
      tools: Schema.union([String, Schema.array(String)]).description('Tool name globs the quota counts. Unset: every tool.'),
      per: Schema.union(QUOTA_SCOPES as QuotaRule['per'][]).required().description('Whose calls are counted together: each user, channel, guild or session, or everyone (global).'),
      max: Schema.natural().min(1).required().description('Calls that may start running per window.'),
      window: Schema.union([Schema.natural().min(1).role('ms'), String]).required().description('The window: milliseconds, or a text such as 30 min, 1h, 1d.'),
      name: Schema.string().description('Shown to the model and in status views. Default: "<tools> per <per>".'),
    })).description('Quotas: calls per user, channel, guild or session in a time window; over one, a call ends rate_limited. Counted in memory; `ctx.tools.registry.quotas.useStore` moves them to a database.'),
    maxRunning: Schema.object({
      session: Schema.natural().min(1).description('Calls of one session running at once.'),
      user: Schema.natural().min(1).description('Calls of one user running at once, over all their sessions.'),
      global: Schema.natural().min(1).description('Calls of this app running at once.'),
    }).description('Caps on running calls; calls beyond a cap wait in order (keeping their timeout).'),
    repair: Schema.boolean().default(true).description('Repair malformed JSON arguments from the model (trailing commas, single quotes, full-width punctuation, a Markdown fence…) when the repair cannot change their meaning; off: refuse them.'),
  })

  /**
   * The host-free registry behind the service. The `permissions` and `background`
   * services set `registry.permissions` / `registry.background` while they are loaded.
   */
  readonly registry: ToolRegistry

  constructor(ctx: Context, config: ToolService.Config = {}) {
    super(ctx, 'tools')
    const emit = eventEmitter(ctx)
    const logger = cordisLogger(ctx)
    this.registry = new ToolRegistry({ emit, logger, limits: config, redact: config.redact, quotas: config.quotas, maxRunning: config.maxRunning, repair: config.repair })
    // Calls still running when the service stops end as `cancelled`, not as a hang.
    ctx.effect(() => () => this.registry.dispose(), 'ctx.tools: abort calls in flight')
  }

  /**
   * Defines a tool for the calling plugin and returns its disposer. The tool is removed
   * when that plugin is disposed or reloaded; calling the disposer twice is harmless.
   * Redefining a name from the same plugin replaces the tool; a name held by another
   * live plugin throws a `DoguError` with code `NAME_CONFLICT` naming both plugins.
   *
   * @example
   * ctx.tools.define(defineTool({ name: 'echo', description: 'Repeat a text', ... }))
   */
  define<A = unknown>(tool: Tool<A> | ToolOptions<A>): () => void {
    const fiber = this.ctx.fiber
    if (fiber.uid === null) {
      // A plugin kept `ctx.tools` past its own disposal: nothing would ever remove the tool.
      throw new DoguError('INACTIVE', `plugin "${fiber.name}" is no longer active; it cannot define tool "${toolName(tool)}"`)
    }
    const label = `ctx.tools.define(${JSON.stringify(toolName(tool))})`
    const dispose = this.ctx.effect(() => this.registry.define(tool, fiber, `plugin "${fiber.name}"`), label)
    // The effect's disposer is also a thenable; hand out a plain function instead.
    return () => {
      dispose()
    }
  }

  /**
   * Adds a middleware around every call it matches, after validation and authorization;
   * it is removed with the calling plugin. Middlewares run by `order` (lower outside), then
   * in registration order. See `ToolMiddleware` for what one may do.
   *
   * @example
   * ctx.tools.use(async (call, next) => {
   *   if (call.session.guildId === 'g-quiet') return { status: 'denied', reason: 'no tools in this group' }
   *   return next()
   * }, { name: 'quiet-group', tools: 'shell' })
   */
  use(middleware: ToolMiddleware, options?: MiddlewareOptions): () => void {
    const fiber = this.ctx.fiber
    if (fiber.uid === null) throw new DoguError('INACTIVE', `plugin "${fiber.name}" is no longer active; it cannot add a middleware`)
    const dispose = this.ctx.effect(() => this.registry.use(middleware, options, `plugin "${fiber.name}"`), `ctx.tools.use(${JSON.stringify(options?.name ?? middleware?.name ?? '')})`)
    return () => {
      dispose()
    }
  }

  /**
   * Declares secret values (a token, a header) the calling plugin holds: they are replaced
   * with `[redacted]` in every result and progress line while the plugin is loaded, unless
   * the `redact.builtin` config is off. Returns the disposer.
   */
  redact(values: Iterable<string>): () => void {
    const dispose = this.ctx.effect(() => this.registry.redactor.add(values), 'ctx.tools.redact()')
    return () => {
      dispose()
    }
  }

  /**
   * Registers a source of tools (an imported MCP server) while the calling plugin is
   * loaded: the consoles list it, and `toolset.unavailable()` names it while it has no
   * tools. Returns the disposer.
   */
  addSource(source: ToolSource): () => void {
    const dispose = this.ctx.effect(() => this.registry.addSource(source), 'ctx.tools.addSource()')
    return () => {
      dispose()
    }
  }

  /** The registered sources of tools, by kind then name. */
  sources(): ToolSource[] {
    return this.registry.sources()
  }

  /** A finalized toolset for one session. See `ToolsetOptions`. */
  toolset(options: ToolsetOptions): Toolset {
    return this.registry.toolset(options)
  }

  /** Shortcut: makes a toolset for `options` and runs `calls` through it. */
  execute(calls: readonly ModelToolCall[], options: ToolsetOptions & ExecuteOptions): Promise<ToolResult[]> {
    return this.registry.execute(calls, options)
  }

  /** All tools, sorted by name. */
  list(): Tool[] {
    return this.registry.list()
  }

  /** The tool of this name, if one is defined. */
  get(name: string): Tool | undefined {
    return this.registry.get(name)
  }

  /** Tools filtered by name globs (ChatLuna's `filter`); `visibility` is not applied. */
  filter(options: { include?: string[]; exclude?: string[] } = {}): Tool[] {
    return this.registry.filter(options)
  }
}

export namespace ToolService {
  export interface Config {
    /** @default 50_000 */
    maxContentLength?: number
    /** @default 1_000_000 */
    maxArgumentsLength?: number
    /** Upper bound on every tool's timeout (ms). */
    timeout?: number
    /** Secrets replaced with `[redacted]` in results and progress. */
    redact?: RedactOptions
    /** Calls per window, per user, channel, guild, session or everyone. */
    quotas?: QuotaRule[]
    /** Caps on calls running at once. */
    maxRunning?: MaxRunning
    /** Repair malformed JSON arguments. @default true */
    repair?: boolean
  }
}

function toolName(tool: Tool | ToolOptions): string {
  return typeof tool?.name === 'string' ? tool.name : '?'
}
