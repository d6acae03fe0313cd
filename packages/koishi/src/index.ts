import { type Context, Schema } from 'koishi'
import { auditCommand } from './audit-command'
import { auditFields, AuditService } from './audit-service'
import { BackgroundService } from './background-service'
import { chatApprovals, ChatApprovalsConfig } from './chat-approvals'
import { chatlunaBridge, ChatLunaBridgeConfig } from './chatluna-bridge'
import { commands, CommandsConfig } from './commands'
import { consolePage, ConsolePageConfig } from './console-page'
import { mcpImport, McpImportConfig } from './mcp-import'
import { mcpOAuthCallback } from './mcp-oauth-callback'
import { defaultAuthoritySchema, PermissionService, permissionsFields } from './permissions-service'
import { described } from './schema-text'
import { taskNotices, TaskNoticesConfig } from './task-notices'
import { ToolService } from './tools-service'

export { type AuditCommandConfig, auditCommand } from './audit-command'
export { AuditService } from './audit-service'
export { BackgroundService } from './background-service'
export { chatApprovals, ChatApprovalsConfig } from './chat-approvals'
export { chatlunaBridge, ChatLunaBridgeConfig } from './chatluna-bridge'
export { type CommandAuthority, commands, CommandsConfig } from './commands'
export { consolePage, ConsolePageConfig } from './console-page'
export type { KoishiDoguSession } from './koishi-permission'
export { mcpImport, McpImportConfig } from './mcp-import'
export { mcpOAuthCallback, OAUTH_CALLBACK_PATH } from './mcp-oauth-callback'
export { type DoguPermissions, type KoishiPermissionRule, PermissionService } from './permissions-service'
export { type DoguSessionOptions, doguSession, localeOf, toolsetFor } from './session'
export { taskNotices, TaskNoticesConfig } from './task-notices'
export { ToolService } from './tools-service'

/** The plugin's name in Koishi's market and console. */
export const name = 'dogu'

// A database is used when loaded (authority and Koishi permissions from the user table).
export const inject = { database: { required: false } }

export interface Config {
  /** @default 1 */
  defaultAuthority?: number
  tools?: ToolService.Config
  permissions?: Omit<PermissionService.Config, 'defaultAuthority' | 'instanceId'>
  background?: BackgroundService.Config
  /** `ctx.audit` and the `dogu.audit` command. */
  audit?: AuditService.Config & {
    /** The lowest authority `dogu.audit` needs. @default 3 */
    authority?: number
  }
  approvals?: ChatApprovalsConfig
  commands?: CommandsConfig
  notices?: TaskNoticesConfig
  chatluna?: ChatLunaBridgeConfig
  console?: ConsolePageConfig
  /** MCP servers whose tools to import (needs @dogu/mcp installed): @dogu/mcp's client config. */
  mcp?: McpImportConfig
}

export const Config: Schema<Config> = Schema.object({
  defaultAuthority: defaultAuthoritySchema,
  tools: described(ToolService.Config, 'Tools: `ctx.tools`, limits of every call.', '工具：`ctx.tools` 与每次调用的限制。'),
  permissions: described(Schema.object(permissionsFields), 'Permissions: rules, modes and approvals of tool calls.', '权限：工具调用的规则、模式与审批。'),
  background: described(BackgroundService.Config, 'Background tasks: calls that outlive their timeout.', '后台任务：超时后继续运行的调用。'),
  audit: described(Schema.object({
    ...auditFields,
    authority: described(Schema.natural().default(3),
      'Lowest authority of dogu.audit, which shows every user\'s calls.',
      'dogu.audit 所需的最低权限等级（它显示所有用户的调用）。'),
  }), 'Audit trail: one record per tool call, in the dogu_audit table with a database, else in data/dogu/audit.jsonl.', '审计：每次工具调用一条记录；加载数据库时存于 dogu_audit 表，否则存于 data/dogu/audit.jsonl。'),
  approvals: ChatApprovalsConfig,
  commands: CommandsConfig,
  notices: TaskNoticesConfig,
  chatluna: ChatLunaBridgeConfig,
  console: ConsolePageConfig,
  mcp: McpImportConfig,
}) as Schema<Config>

/**
 * Dogu in Koishi: `ctx.tools`, Dogu's methods on `ctx.permissions` and `ctx.background`,
 * each also a plugin of its own, then the chat parts: approvals asked in chat, the
 * `dogu.*` commands and background task notices. Koishi's permissions object stays
 * Koishi's: Dogu adds `authorize`, `rule`, `asker`, … beside `define`, `test`, ….
 *
 * @example
 * // koishi.yml
 * plugins:
 *   dogu:
 *     defaultAuthority: 1
 *     permissions:
 *       rules:
 *         - { permission: 'tool:deploy', koishiPermission: ['authority:4'], decision: allow }
 */
export function apply(ctx: Context, config: Config = {}) {
  // Permissions first: Dogu's methods are on `ctx.permissions` before `ctx.tools` appears,
  // so a plugin that needs `tools` may call `ctx.permissions.rule()` in its apply.
  // One name for this instance in every shared table: the tasks' owner, the pending requests'.
  ctx.plugin(PermissionService, { ...config.permissions, defaultAuthority: config.defaultAuthority, instanceId: config.background?.instanceId })
  ctx.plugin(ToolService, config.tools)
  ctx.plugin(BackgroundService, config.background)
  // Each chat part is a plugin of its own, started once the service it uses is there (the
  // background service is, once its stored tasks are loaded) and gone with it.
  ctx.plugin({ name: 'dogu-chat-approvals', inject: ['tools'], apply: chatApprovals }, config.approvals)
  ctx.plugin({ name: 'dogu-commands', inject: ['tools'], apply: commands }, config.commands)
  ctx.plugin({ name: 'dogu-task-notices', inject: ['background'], apply: taskNotices }, config.notices)
  // Started only when ChatLuna (koishi-plugin-chatluna) is loaded; without it, nothing happens.
  ctx.plugin({ name: 'dogu-chatluna', inject: ['tools', 'chatluna'], apply: chatlunaBridge }, config.chatluna)
  // Dogu's page in Koishi's console, when @koishijs/plugin-console is loaded.
  ctx.plugin({ name: 'dogu-console', inject: ['tools', 'console'], apply: consolePage }, config.console)
  // Where OAuth authorizations of imported MCP servers come back, when Koishi's server is loaded.
  ctx.plugin({ name: 'dogu-mcp-oauth-callback', inject: ['tools', 'server'], apply: mcpOAuthCallback })
  // Imported MCP servers, when configured (and @dogu/mcp is installed).
  ctx.plugin({ name: 'dogu-mcp', inject: ['tools'], apply: mcpImport }, config.mcp)
  // Last: a stopping app disposes plugins in load order, so the audit trail stops after the
  // services whose calls it records, and writes what is queued.
  const { authority: auditAuthority, ...audit } = config.audit ?? {}
  ctx.plugin(AuditService, audit)
  if (config.commands?.enabled !== false && audit.enabled !== false) {
    ctx.plugin({ name: 'dogu-audit-command', inject: ['audit'], apply: auditCommand }, { authority: auditAuthority, listLimit: config.commands?.listLimit })
  }
}
