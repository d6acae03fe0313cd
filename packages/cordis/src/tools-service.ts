import {
  callingPlugin,
  type HostPlugin,
  QUOTA_SCOPES,
  type QuotaRule,
  type ToolEvents,
  type ToolsHostConfig,
  ToolRegistry,
  toolRegistryOptions,
  toolsHost,
} from '@dogu/core'
import { type Context, Service } from 'cordis'
import Schema from 'schemastery'
import { eventEmitter } from './cordis-events'
import { cordisLogger } from './cordis-logger'
import { cordisPlugin } from './cordis-plugin'

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
 * tracker), which is how `define` ties a tool to the plugin that defined it. The methods
 * are the host layer's (`toolsHost` of `@dogu/core`); this class adds Cordis' config and
 * lifecycle.
 */
export class ToolService extends toolsHost(Service) {
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

  override readonly registry: ToolRegistry

  constructor(ctx: Context, config: ToolService.Config = {}) {
    super(ctx, 'tools')
    const emit = eventEmitter(ctx)
    const logger = cordisLogger(ctx)
    this.registry = new ToolRegistry({ emit, logger, ...toolRegistryOptions(config) })
    // Calls still running when the service stops end as `cancelled`, not as a hang.
    ctx.effect(() => () => this.registry.dispose(), 'ctx.tools: abort calls in flight')
  }

  override [callingPlugin](): HostPlugin {
    return cordisPlugin(this.ctx)
  }
}

export namespace ToolService {
  /** See `ToolsHostConfig`: the same on every host. */
  export interface Config extends ToolsHostConfig {}
}
