import {
  callingPlugin,
  DatabaseQuotaStore,
  type HostPlugin,
  MemoryQuotaStore,
  QUOTA_SCOPES,
  type QuotaRule,
  type ToolEvents,
  type ToolsHostConfig,
  ToolRegistry,
  toolRegistryOptions,
  toolsHost,
} from '@dogu/core'
import { type Context, Schema, Service } from 'koishi'
import { followDatabase, koishiDatabase } from './koishi-database'
import { eventEmitter } from './koishi-events'
import { koishiLogger } from './koishi-logger'
import { koishiPlugin } from './koishi-plugin'
import { described } from './schema-text'

declare module 'koishi' {
  interface Context {
    tools: ToolService
  }

  // Koishi's event table, extended with the runtime's: `ctx.on('tools/call-end', …)`.
  interface Events<C extends Context = Context> extends ToolEvents {}
}

/**
 * `ctx.tools` on Koishi: the same contract as `@dogu/cordis`' service on Cordis 4. Plugins
 * define tools through it; agent hosts take toolsets from it.
 *
 * Methods called as `ctx.tools.x()` see the caller's context as `this.ctx` (cordis 3's
 * tracing proxy), which is how `define` ties a tool to the plugin that defined it. The
 * methods are the host layer's (`toolsHost` of `@dogu/core`); this class adds Koishi's
 * config, the quota store that follows the database, and cordis 3's lifecycle.
 */
export class ToolService extends toolsHost(Service) {
  // A database is used when loaded: quota counts live in it, shared by every instance.
  static inject = { database: { required: false } }

  static Config: Schema<ToolService.Config> = Schema.object({
    maxContentLength: described(Schema.natural().min(1).default(50_000),
      'Longest result content, in characters, before it is cut with a marker.',
      '工具结果内容的最大长度（字符数），超出部分截断并加标记。'),
    maxArgumentsLength: described(Schema.natural().min(1).default(1_000_000),
      'Longest JSON arguments string a call may carry.',
      '一次调用的 JSON 参数字符串的最大长度。'),
    timeout: described(Schema.natural().min(1).role('ms'),
      'Upper bound on every tool\'s timeout, in milliseconds. Unset: each tool\'s own timeout.',
      '所有工具超时时间的上限（毫秒）。不填则使用各工具自己的超时。'),
    redact: described(Schema.object({
      env: described(Schema.array(String),
        'Environment variables whose values are replaced with [redacted] in every result and progress line.',
        '环境变量名：其值在所有工具结果和进度消息中替换为 [redacted]。'),
      patterns: described(Schema.array(String),
        'Regular expressions whose matches are replaced with [redacted] (run on a linear-time engine).',
        '正则表达式：匹配的内容替换为 [redacted]（使用线性时间引擎执行）。'),
      builtin: described(Schema.boolean().default(true),
        'Also redact the secrets Dogu holds: MCP headers and tokens, the console token.',
        '同时遮蔽 Dogu 自己持有的密钥：MCP 请求头和令牌、控制台令牌。'),
    }), 'Secrets kept out of what the model, the logs and the console see.', '不让模型、日志和控制台看到的密钥。'),
    quotas: described(Schema.array(Schema.object({
      tools: described(Schema.union([String, Schema.array(String)]),
        'Tool name globs the quota counts. Unset: every tool.',
        '计入此配额的工具名通配符。不填则为所有工具。'),
      per: described(Schema.union(QUOTA_SCOPES as QuotaRule['per'][]).required(),
        'Whose calls are counted together: each user, channel, guild or session, or everyone (global).',
        '按谁计数：每个用户（user）、频道（channel）、群组（guild）、会话（session），或所有人（global）。'),
      max: described(Schema.natural().min(1).required(),
        'Calls that may start running per window.',
        '每个时间窗口内最多开始运行的调用数。'),
      window: described(Schema.union([Schema.natural().min(1).role('ms'), String]).required(),
        'The window: milliseconds, or a text such as 30 min, 1h, 1d, 1 小时.',
        '时间窗口：毫秒数，或 30 min、1h、1d、1 小时 这样的文字。'),
      name: described(Schema.string(),
        'Shown to the model and in dogu.quota. Default: "<tools> per <per>".',
        '显示给模型和 dogu.quota 的名称。默认为 "<工具> per <范围>"。'),
    })), 'Quotas: calls per user, channel, guild or session in a time window; over one, a call ends rate_limited. Counts are kept in the database when one is loaded (shared by every instance on it).',
    '配额：每个用户、频道、群组或会话在一段时间内可调用的次数；超出时调用以 rate_limited 结束。加载数据库时计数存于数据库（同一数据库上的所有实例共享）。'),
    maxRunning: described(Schema.object({
      session: described(Schema.natural().min(1), 'Calls of one session running at once.', '同一会话同时运行的调用数上限。'),
      user: described(Schema.natural().min(1), 'Calls of one user running at once, over all their sessions.', '同一用户（所有会话合计）同时运行的调用数上限。'),
      global: described(Schema.natural().min(1), 'Calls of this bot running at once.', '本机器人同时运行的调用数上限。'),
    }), 'Caps on running calls; calls beyond a cap wait in order (keeping their timeout).', '同时运行的调用数上限；超出的调用按顺序等待（超时照常计算）。'),
    repair: described(Schema.boolean().default(true),
      'Repair malformed JSON arguments from the model (trailing commas, single quotes, full-width punctuation, a Markdown fence…) when the repair cannot change their meaning; off: refuse them.',
      '修复模型发来的不规范 JSON 参数（多余逗号、单引号、全角标点、Markdown 代码块……），仅在修复不会改变含义时；关闭则直接拒绝。'),
  })

  override readonly registry: ToolRegistry

  constructor(ctx: Context, config: ToolService.Config = {}) {
    super(ctx, 'tools', true)
    this.config = config
    const logger = koishiLogger(ctx)
    const storeFor = (database: ReturnType<typeof koishiDatabase>) => database ? new DatabaseQuotaStore({ database, logger }) : new MemoryQuotaStore()
    const registry = this.registry = new ToolRegistry({
      emit: eventEmitter(ctx),
      logger,
      ...toolRegistryOptions(config),
      quotaStore: config.quotas?.length ? storeFor(koishiDatabase(ctx)) : undefined,
    })
    // A database that starts late, is reloaded or goes: new counts follow it (the engine stays).
    if (registry.quotas.active) {
      followDatabase(ctx, {
        switch: (database) => void registry.quotas.useStore(storeFor(database)),
        lost: () => registry.quotas.store.close?.(),
      })
    }
  }

  protected override start() {
    // cordis 3 runs a plugin's disposers in the order they were added. Added here, after
    // `ctx.tools` was set, this runs after the service is withdrawn and its dependents (the
    // background service, tool plugins) are reset: calls still running then end `cancelled`.
    // cordis 3 starts a service whose constructor threw (a bad quota in the config): it has
    // no registry then, and its plugin has already failed with that error.
    this.ctx.effect(() => () => this.registry?.dispose())
  }

  override [callingPlugin](): HostPlugin {
    return koishiPlugin(this.ctx)
  }
}

export namespace ToolService {
  /** See `ToolsHostConfig`: the same on every host. */
  export interface Config extends ToolsHostConfig {}
}
