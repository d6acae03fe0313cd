import { resolve } from 'node:path'
import {
  auditHost,
  type AuditHostConfig,
  auditLogOptions,
  AuditLog,
  type BackgroundTask,
  type CallInfo,
  type DecisionEvent,
  DEFAULT_AUDIT_RETENTION,
  JsonlAuditStore,
  type ToolResult,
} from '@dogu/core'
import { type Context, Service } from 'cordis'
import Schema from 'schemastery'
// For the `tools/call-end` and `permissions/decision` event declarations this service listens to.
import type {} from './permissions-service'
import type {} from './tools-service'
import type {} from './background-service'
import { tapEvent } from './cordis-events'
import { cordisLogger } from './cordis-logger'

declare module 'cordis' {
  interface Context {
    audit: AuditService
  }
}

/**
 * `ctx.audit`: the audit trail of a Cordis app. Every tool call gets one record (who called,
 * what decided, who was asked and answered, how it ended), written in batches to
 * `data/dogu/audit.jsonl`. Console views and chat commands (`dogu.audit`) read it through
 * `query`; a host with a database switches the store with `useStore` (`dogu_audit`).
 *
 * It taps `tools/call-end` and `permissions/decision` of the app's Dogu services (past
 * Cordis' dispatch: see `tapEvent`), and injects nothing,
 * so the Dogu plugin loads it first and it stops last: calls the tools service cancels as the
 * app stops are still recorded. `query`, `export`, `flush` and `useStore` are the host
 * layer's (`auditHost` of `@dogu/core`).
 *
 * @example
 * const denied = await ctx.audit.query({ outcome: 'denied', since: Date.now() - 86_400_000 })
 */
export class AuditService extends auditHost(Service) {
  static Config: Schema<AuditService.Config> = Schema.object({
    enabled: Schema.boolean().default(true).description('Record every tool call and permission decision.'),
    storePath: Schema.string().description('JSON Lines file of audit records. Default: data/dogu/audit.jsonl under the working directory.'),
    hashArguments: Schema.union([Boolean, Schema.array(String)]).default(false)
      .description('Record a sha256 of the arguments instead of the arguments: true for every tool, or a list of tool names.'),
    maxRecords: Schema.natural().min(1).default(DEFAULT_AUDIT_RETENTION.maxRecords)
      .description('Most records kept; beyond it the oldest are removed.'),
    maxAgeMs: Schema.natural().min(1).role('ms').default(DEFAULT_AUDIT_RETENTION.maxAgeMs)
      .description('Records older than this are removed.'),
  }) as Schema<AuditService.Config>

  override readonly log: AuditLog | undefined = undefined

  constructor(ctx: Context, config: AuditService.Config = {}) {
    super(ctx, 'audit')
    if (config.enabled === false) return
    const logger = cordisLogger(ctx)
    const log = this.log = new AuditLog({
      ...auditLogOptions(config),
      store: new JsonlAuditStore(resolve(config.storePath ?? 'data/dogu/audit.jsonl'), { logger }),
      logger,
    })
    // Taps, not `ctx.on`: a Cordis listener on every call would cost more than the call.
    ctx.effect(() => tapEvent(ctx, 'permissions/decision', (event: DecisionEvent) => log.onDecision(event)), 'ctx.audit: record permission decisions')
    ctx.effect(() => tapEvent(ctx, 'tools/call-end', (info: CallInfo, result: ToolResult) => log.onCallEnd(info, result)), 'ctx.audit: record tool calls')
    // Rare (a task's end), so a plain listener: the call's own record says `background`, this one how it ended.
    ctx.on('background/settled', (task: BackgroundTask) => log.onTaskSettled(task))
    // Unload, reload or the app's stop: what is queued is written before the next start.
    ctx.effect(() => () => log.stop(), 'ctx.audit: write queued records')
  }

  /** Active once the store is opened and pruned. */
  async [Service.init]() {
    await this.log?.ready
  }
}

export namespace AuditService {
  export interface Config extends AuditHostConfig {
    /** @default 'data/dogu/audit.jsonl' (relative to the working directory) */
    storePath?: string
  }
}
