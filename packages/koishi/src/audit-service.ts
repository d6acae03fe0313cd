import { resolve } from 'node:path'
import {
  auditHost,
  type AuditHostConfig,
  auditLogOptions,
  AuditLog,
  type AuditStore,
  type CallInfo,
  DatabaseAuditStore,
  type DecisionEvent,
  DEFAULT_AUDIT_RETENTION,
  JsonlAuditStore,
  type MinatoDatabase,
  type ToolResult,
} from '@dogu/core'
import { type Context, Schema, Service } from 'koishi'
import { followDatabase, koishiDatabase } from './koishi-database'
import { tapEvent } from './koishi-events'
import { koishiLogger } from './koishi-logger'
import { described } from './schema-text'
// For the `tools/call-end` and `permissions/decision` event declarations this service listens to.
import type {} from './permissions-service'
import type {} from './tools-service'
// For the `exit` event Koishi's loader emits (and awaits) before the process exits.
import type {} from '@koishijs/loader'

declare module 'koishi' {
  interface Context {
    audit: AuditService
  }
}

/** The fields of the `audit` section of the Dogu plugin's config. */
export const auditFields = {
  enabled: described(Schema.boolean().default(true),
    'Record every tool call and its permission decisions.',
    '记录每一次工具调用及其权限决定。'),
  hashArguments: described(Schema.union([Boolean, Schema.array(String)]).default(false),
    'Record a sha256 of the arguments instead of the arguments: true for every tool, or a list of tool names.',
    '记录参数的 sha256 摘要而不是参数本身：true 表示所有工具，或填写工具名列表。'),
  maxRecords: described(Schema.natural().min(1).default(DEFAULT_AUDIT_RETENTION.maxRecords),
    'Most records kept; beyond it the oldest are removed.',
    '最多保留的记录数；超出时移除最早的记录。'),
  maxAgeMs: described(Schema.natural().min(1).role('ms').default(DEFAULT_AUDIT_RETENTION.maxAgeMs),
    'Records older than this are removed.',
    '早于此时长的记录会被移除。'),
  storePath: described(Schema.string(),
    'JSON Lines file of audit records without a database. Default: data/dogu/audit.jsonl under Koishi\'s base directory. With a database, records go to the dogu_audit table.',
    '未加载数据库时保存审计记录的 JSON Lines 文件。默认：Koishi 根目录下的 data/dogu/audit.jsonl。加载数据库后记录写入 dogu_audit 表。'),
}

/**
 * `ctx.audit` on Koishi: the same contract as `@dogu/cordis`' service. Every tool call gets
 * one record (who called, what decided, who was asked and answered, how it ended), written
 * in batches: to the `dogu_audit` table while Koishi's database is loaded (shared by every
 * instance on it), else to `data/dogu/audit.jsonl` under Koishi's base directory. The
 * `dogu.audit` command reads it through `query`.
 *
 * The engine outlives its stores: a driver that starts after Dogu, is reloaded, or goes only
 * switches where new records are written. The Dogu plugin loads this service last, so that
 * a stopping app (cordis 3 disposes plugins in load order) disposes it after the tools and
 * permissions services; what is queued is then written, except to a table: Koishi does not
 * wait for the write, and the driver closes before it could land (a debug line says so).
 * `query`, `export`, `flush` and `useStore` are the host layer's (`auditHost` of `@dogu/core`).
 *
 * @example
 * const denied = await ctx.audit.query({ outcome: 'denied', since: Date.now() - 86_400_000 })
 */
export class AuditService extends auditHost(Service) {
  static inject = { database: { required: false } }

  static Config: Schema<AuditService.Config> = Schema.object(auditFields) as Schema<AuditService.Config>

  override readonly log: AuditLog | undefined = undefined

  constructor(ctx: Context, config: AuditService.Config = {}) {
    super(ctx, 'audit', true)
    if (config.enabled === false) return
    const logger = koishiLogger(ctx)
    const path = resolve(ctx.baseDir ?? process.cwd(), config.storePath ?? 'data/dogu/audit.jsonl')
    const storeFor = (database: MinatoDatabase | undefined): AuditStore => database
      ? new DatabaseAuditStore({ database, logger, migrateFrom: path })
      : new JsonlAuditStore(path, { logger })
    let store = storeFor(koishiDatabase(ctx))
    const log = this.log = new AuditLog({
      ...auditLogOptions(config),
      store,
      logger,
    })
    // A database that starts late, is reloaded or goes: new records follow it.
    followDatabase(ctx, {
      switch: (database) => {
        const previous = store
        store = storeFor(database)
        // Gone while the app runs: what the log still hands the old table goes to the file.
        if (!database && previous instanceof DatabaseAuditStore) previous.detach('the database went away', store)
        void log.useStore(store)
      },
      lost: (reason) => {
        if (store instanceof DatabaseAuditStore) store.detach(reason)
      },
    })
    // The app stops: cordis 3 disposes its plugins in load order without waiting, so the
    // driver goes before a write started now could reach it. Records still queued for the
    // table are dropped with a debug line rather than failing in a closed driver. On the
    // root, not this plugin: the write this plugin's own disposal starts is covered too.
    const root = ctx.root
    const stopping = root.on('dispose', () => {
      if (store instanceof DatabaseAuditStore) store.detach('the app stopped')
    }, true)
    // Taps, not `ctx.on`: a cordis 3 listener on every call would cost many times the call.
    ctx.effect(() => tapEvent(ctx, 'permissions/decision', (event: DecisionEvent) => log.onDecision(event)))
    ctx.effect(() => tapEvent(ctx, 'tools/call-end', (info: CallInfo, result: ToolResult) => log.onCallEnd(info, result)))
    // The call's own record says `background`; this one how its task ended.
    ctx.on('background/settled', (task) => log.onTaskSettled(task))
    // `koishi start` on SIGINT / SIGTERM awaits `exit` and then exits the process, without
    // stopping the app: the queue is written here, while the driver is still open.
    ctx.on('exit', () => log.flush())
    // Unload, reload or the app's stop: what is queued is written before the next start.
    ctx.effect(() => () => void log.stop().finally(stopping))
  }
}

export namespace AuditService {
  export interface Config extends AuditHostConfig {
    /** @default 'data/dogu/audit.jsonl' (under Koishi's base directory) */
    storePath?: string
  }
}
