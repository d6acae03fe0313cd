import { describeResult, type Grant, isPermissionMode, PERMISSION_MODES, resultMessage, type Session, type Tool, type ToolResult, ToolSearchIndex } from '@dogu/core'
import { type Argv, type Context, h, Schema, type Session as KoishiSession } from 'koishi'
import { clipText } from './clip-text'
import { durationIn, durationUpIn } from './format-duration'
import { configDescriptions, defineLocales } from './locales'
import { mcpCommand } from './mcp-command'
import { commandLocale } from './person-locale'
import { quotaCommand } from './quota-command'
import { doguSession, toolsetFor } from './session'

/** The lowest authority each command needs. */
export interface CommandAuthority {
  /** `dogu.tools`, and `dogu.quota` (the sender's own quotas). @default 1 */
  tools?: number
  /** `dogu.tasks`. @default 1 */
  tasks?: number
  /** `dogu.run`. @default 3 */
  run?: number
  /** `dogu.grants`. @default 3 */
  grants?: number
  /** `dogu.revoke`. @default 3 */
  revoke?: number
  /** `dogu.mode`, to show and to set. @default 4 (the approver authority: `trust` approves everything) */
  mode?: number
  /** `dogu.mcp`, the imported MCP servers (their errors name hosts and accounts). @default 3 */
  mcp?: number
  /** `dogu.mcp.auth`: the bot then acts on the server as the authorizing account. @default 4 (as `mode`) */
  mcpAuth?: number
}

export interface CommandsConfig {
  /** Register the `dogu.*` commands. @default true */
  enabled?: boolean
  authority?: CommandAuthority
  /** Longest result `dogu.run` shows, in characters. @default 1000 */
  maxOutput?: number
  /** Most entries a list shows. @default 20 */
  listLimit?: number
}

const AUTHORITY: Readonly<Required<CommandAuthority>> = Object.freeze({ tools: 1, tasks: 1, run: 3, grants: 3, revoke: 3, mode: 4, mcp: 3, mcpAuth: 4 })

export const CommandsConfig: Schema<CommandsConfig> = Schema.object({
  enabled: Schema.boolean().default(true),
  authority: Schema.object({
    tools: Schema.natural().default(AUTHORITY.tools),
    tasks: Schema.natural().default(AUTHORITY.tasks),
    run: Schema.natural().default(AUTHORITY.run),
    grants: Schema.natural().default(AUTHORITY.grants),
    revoke: Schema.natural().default(AUTHORITY.revoke),
    mode: Schema.natural().default(AUTHORITY.mode),
    mcp: Schema.natural().default(AUTHORITY.mcp),
    mcpAuth: Schema.natural().default(AUTHORITY.mcpAuth),
  }),
  maxOutput: Schema.natural().min(1).default(1000),
  listLimit: Schema.natural().min(1).default(20),
}).i18n(configDescriptions((config) => config.commands))

const MODES = Object.keys(PERMISSION_MODES).join(', ')

/**
 * The `dogu.*` commands, for the people in a chat: list and search tools, call one as
 * yourself, follow background tasks, list and revoke grants, show or set the session's
 * permission mode, see what is left of your quotas, list the imported MCP servers and
 * authorize one. Texts come from the locale files; each
 * command needs an authority (see `CommandAuthority`), checked by Koishi against its user
 * table when a database is loaded and, in any case, against the authority Dogu itself sees
 * for the caller.
 */
export function commands(ctx: Context, config: CommandsConfig = {}): void {
  if (config.enabled === false) return
  defineLocales(ctx, 'commands', (locale) => locale.commands)
  const authority = { ...AUTHORITY, ...config.authority }
  const limit = config.listLimit ?? 20
  const maxOutput = config.maxOutput ?? 1000
  let runs = 0

  // Without a database Koishi checks no authority at all; Dogu's own view of the caller
  // (the user table, else the configured default) decides then. Texts are composed from
  // rendered parts (`session.i18n`), so a tool's text is escaped exactly once.
  const gate = (name: keyof CommandAuthority) => async ({ session }: Argv) => {
    const { authority: held = 0 } = await ctx.permissions.resolveSession(session!)
    if (held < authority[name]) return session!.text('internal.low-authority')
  }

  const more = (session: KoishiSession, total: number) =>
    total > limit ? [session.text('.more', { count: total - limit })] : []

  ctx.command('dogu', { authority: authority.tools })

  ctx.command('dogu.tools [query:text]', { authority: authority.tools })
    .check(gate('tools'))
    .action(async ({ session }, query) => {
      const toolset = await toolsetFor(ctx, session!)
      const tools = toolset.names.map((name) => toolset.get(name)!)
      if (!tools.length) return session!.text('.none')
      const item = (tool: Tool) => session!.text('.item', { name: tool.name, description: brief(tool.description) })
      if (!query?.trim()) {
        return [session!.text('.header', { count: tools.length }), ...tools.slice(0, limit).map(item), ...more(session!, tools.length)].join('\n')
      }
      // The ranking `tool_search` uses, over this session's tools.
      const index = new ToolSearchIndex()
      for (const tool of tools) index.add(tool)
      const hits = index.search(query, { limit })
      if (!hits.length) return session!.text('.no-match', { query })
      return [session!.text('.results', { query }), ...hits.map((hit) => item(toolset.get(hit.name)!))].join('\n')
    })

  ctx.command('dogu.run <tool:string> [args:text]', { authority: authority.run })
    .check(gate('run'))
    .action(async ({ session }, tool, args) => {
      if (!tool) return
      // A call in flight when the plugin is unloaded is cancelled, not left running.
      const controller = new AbortController()
      const stop = ctx.on('dispose', () => controller.abort())
      let result: ToolResult
      try {
        const toolset = await toolsetFor(ctx, session!)
        ;[result] = await toolset.execute(
          [{ id: `dogu-run-${++runs}`, name: tool, arguments: args?.trim() || '{}' }],
          { signal: controller.signal },
        )
      } finally {
        stop()
      }
      // The plugin went (the app stops) while the call waited: there is nobody left to reply to.
      if (controller.signal.aborted) return
      if (result.status === 'background') return session!.text('.background', { tool, taskId: result.taskId })
      const status = session!.i18n(`.status.${result.status}`)
      const duration = ({ unit, count }: ReturnType<typeof durationIn>) => session!.i18n(`.duration.${unit}`, [count])
      // A quota's refusal says, in the words of `dogu.quota`, which quota and when to try again (rounded up).
      const message = resultMessage(result)
      if (message?.code === 'rate_limited' && message.params.source === 'quota') {
        const { quota, max, windowMs, retryAfterMs } = message.params
        return session!.text('.result-quota', { tool, status, quota, max, window: duration(durationIn(windowMs)), after: duration(durationUpIn(retryAfterMs)) })
      }
      const lines = [result.status === 'rate_limited' && result.retryAfterMs !== undefined
        ? session!.text('.result-retry', { tool, status, after: duration(durationUpIn(result.retryAfterMs)) })
        : session!.text('.result', { tool, status })]
      // The outcome in the reply's language, from the result's code and parameters (the model read `content`).
      const shown = describeResult(result, commandLocale(session!))
      const { text, cut } = clipText(shown, maxOutput)
      if (text) lines.push(h.escape(text))
      if (cut) lines.push(session!.text('.truncated', { length: shown.length }))
      if (result.images?.length) lines.push(session!.text('.images', { count: result.images.length }))
      return lines.join('\n')
    })

  ctx.command('dogu.tasks', { authority: authority.tasks })
    .check(gate('tasks'))
    .action(({ session }) => {
      const background = ctx.get('background') as Context['background'] | undefined
      if (!background) return session!.text('.unavailable')
      const tasks = background.list({ session: doguSession(session!).id }).reverse()
      if (!tasks.length) return session!.text('.none')
      const now = Date.now()
      const item = (task: (typeof tasks)[number]) => {
        const { unit, count } = durationIn(now - task.startedAt)
        return session!.text('.item', {
          id: task.id,
          tool: task.tool,
          status: session!.i18n(`.status.${task.status}`),
          age: session!.i18n(`.duration.${unit}`, [count]),
        })
      }
      return [session!.text('.header', { count: tasks.length }), ...tasks.slice(0, limit).map(item), ...more(session!, tasks.length)].join('\n')
    })

  ctx.command('dogu.grants', { authority: authority.grants })
    .check(gate('grants'))
    .option('all', '-a')
    .action(({ session, options }) => {
      const own = doguSession(session!)
      const grants = ctx.permissions.grants().filter((grant) => options!.all || covers(grant, own))
      if (!grants.length) return session!.text('.none')
      const item = (grant: Readonly<Grant>) => session!.text('.item', {
        id: grant.id,
        scope: session!.i18n(`.scope.${grant.scope}`),
        permission: grant.permission,
        target: grant.target === undefined ? '' : session!.i18n('.target', { target: grant.target }),
        tool: grant.tool,
        by: grant.by,
      })
      return [session!.text('.header', { count: grants.length }), ...grants.slice(0, limit).map(item), ...more(session!, grants.length)].join('\n')
    })

  ctx.command('dogu.revoke <id:string>', { authority: authority.revoke })
    .check(gate('revoke'))
    .action(({ session }, id) => {
      if (!id) return
      return session!.text(ctx.permissions.revoke(id) ? '.revoked' : '.missing', { id })
    })

  ctx.command('dogu.mode [mode:string]', { authority: authority.mode })
    .check(gate('mode'))
    .option('reset', '-r')
    .action(({ session, options }, mode) => {
      const { id } = doguSession(session!)
      if (options!.reset) {
        ctx.permissions.setMode(id, undefined)
        return session!.text('.reset', { mode: ctx.permissions.modeOf(id) })
      }
      if (mode === undefined) return session!.text('.current', { mode: ctx.permissions.modeOf(id), modes: MODES })
      if (!isPermissionMode(mode)) return session!.text('.invalid', { mode, modes: MODES })
      ctx.permissions.setMode(id, mode)
      return session!.text('.set', { mode })
    })

  quotaCommand(ctx, authority.tools, gate('tools'))
  mcpCommand(ctx, { list: authority.mcp, auth: authority.mcpAuth }, { list: gate('mcp'), auth: gate('mcpAuth') })
}

/** Grants that apply here: this session's, and the caller's own `always` grants. */
function covers(grant: Readonly<Grant>, session: Session): boolean {
  const { subject } = grant
  if (subject.sessionId !== undefined) return subject.sessionId === session.id
  return subject.userId !== undefined && subject.userId === session.userId
    && (subject.platform === undefined || subject.platform === session.platform)
}

/** A description's first line, short enough for a list. */
function brief(description: string): string {
  const line = description.trim().split('\n', 1)[0]
  const { text, cut } = clipText(line, 80)
  return cut ? text + '…' : text
}
