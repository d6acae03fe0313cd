import { DoguError } from '../errors'
import type { MiddlewareOptions, ToolMiddleware } from '../middleware/tool-middleware'
import type { MaxRunning, QuotaRule } from '../quotas'
import type { RedactOptions } from '../redaction/redactor'
import type { Tool, ToolOptions } from '../tool'
import type { ModelToolCall } from '../tool-call'
import type { ToolRegistry, ToolRegistryOptions } from '../tool-registry'
import type { ToolResult } from '../tool-result'
import type { ToolSource } from '../tool-source'
import type { ExecuteOptions, Toolset, ToolsetOptions } from '../toolset'
import { callingPlugin, type HostBaseClass, type HostPlugin, pluginEffect } from './host-plugin'

/**
 * `ctx.tools` for any host: extends the host's `Service` with the whole method set of the
 * contract, over a `ToolRegistry`. The host's class adds only what is its own: the config
 * schema, building the registry, its lifecycle, and `[callingPlugin]()`.
 *
 * @example
 * export class ToolService extends toolsHost(Service) {
 *   readonly registry: ToolRegistry
 *   constructor(ctx: Context, config: ToolService.Config = {}) {
 *     super(ctx, 'tools')
 *     this.registry = new ToolRegistry({ emit: eventEmitter(ctx), limits: config })
 *   }
 *   [callingPlugin]() { return hostPlugin(this.ctx) }
 * }
 */
export function toolsHost<B extends HostBaseClass>(Base: B) {
  abstract class ToolsHost extends Base {
    /**
     * The host-free registry behind the service. The `permissions` and `background`
     * services set `registry.permissions` / `registry.background` while they are loaded.
     */
    abstract readonly registry: ToolRegistry

    /** The plugin calling a method now; see `HostPlugin`. */
    abstract [callingPlugin](): HostPlugin

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
      const plugin = this[callingPlugin]()
      if (!plugin.active) {
        // A plugin kept `ctx.tools` past its own disposal: nothing would ever remove the tool.
        throw new DoguError('INACTIVE', `${plugin.label} is no longer active; it cannot define tool "${toolName(tool)}"`)
      }
      return pluginEffect(plugin, () => this.registry.define(tool, plugin.owner, plugin.label), `ctx.tools.define(${JSON.stringify(toolName(tool))})`)
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
      const plugin = this[callingPlugin]()
      if (!plugin.active) throw new DoguError('INACTIVE', `${plugin.label} is no longer active; it cannot add a middleware`)
      return pluginEffect(plugin, () => this.registry.use(middleware, options, plugin.label), `ctx.tools.use(${JSON.stringify(options?.name ?? middleware?.name ?? '')})`)
    }

    /**
     * Declares secret values (a token, a header) the calling plugin holds: they are replaced
     * with `[redacted]` in every result and progress line while the plugin is loaded, unless
     * the `redact.builtin` config is off. Returns the disposer.
     */
    redact(values: Iterable<string>): () => void {
      return pluginEffect(this[callingPlugin](), () => this.registry.redactor.add(values), 'ctx.tools.redact()')
    }

    /**
     * Registers a source of tools (an imported MCP server) while the calling plugin is
     * loaded: the consoles list it, and `toolset.unavailable()` names it while it has no
     * tools. Returns the disposer.
     */
    addSource(source: ToolSource): () => void {
      return pluginEffect(this[callingPlugin](), () => this.registry.addSource(source), 'ctx.tools.addSource()')
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
  return ToolsHost
}

/** The config every host's tools service takes (its schema may describe it in more languages). */
export interface ToolsHostConfig {
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

/** The registry's options a tools service's config sets, the same on every host. */
export function toolRegistryOptions(config: ToolsHostConfig): Pick<ToolRegistryOptions, 'limits' | 'redact' | 'quotas' | 'maxRunning' | 'repair'> {
  return { limits: config, redact: config.redact, quotas: config.quotas, maxRunning: config.maxRunning, repair: config.repair }
}

function toolName(tool: Tool | ToolOptions): string {
  return typeof tool?.name === 'string' ? tool.name : '?'
}
