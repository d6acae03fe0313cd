import type { Approver, CallInfo, DecisionEvent, ToolResult } from '@dogu/core'
import { ConsoleApi, ConsoleAsker, ConsoleError, type ConsoleHost, ConsoleLog, type ConsoleMethod, errorBody } from '@dogu/webui/console'
import type { Client } from '@koishijs/console'
import { type Context, Schema } from 'koishi'
import { resolve } from 'node:path'
import { described } from './schema-text'
// For `ctx.console` and the console's `Client` (its `auth` when @koishijs/plugin-auth is loaded).
import type {} from '@koishijs/plugin-console'
import type {} from '@koishijs/plugin-auth'

/** Listener names on Koishi's console: `dogu/<method>` for each method of the page's API. */
const LISTENER_PREFIX = 'dogu/'

/** What a console listener answers: the method's result, or the refusal as data. */
export type ConsoleReply = { value: unknown } | { error: ReturnType<typeof errorBody> }

/** `ctx.console.addListener` for names outside the console's own event table. */
type AddListener = (name: string, callback: (this: Client, payload?: unknown) => Promise<ConsoleReply>, options: { authority: number }) => void

/** What the console's client gets with the page's entry (client/index.ts). */
export interface ConsolePageData {
  /** `ConsolePageConfig.authority`: the page's route asks for it. */
  authority: number
  /** @koishijs/plugin-auth is loaded: the page waits for a login, or says to log in. */
  login: boolean
}

export interface ConsolePageConfig {
  /** Turn the page off. @default true */
  enabled?: boolean
  /**
   * The console authority a user needs to open the page and call its API (checked by
   * @koishijs/plugin-auth when loaded). Without plugin-auth, the console has no login and
   * whoever reaches it acts with this authority. @default 4
   */
  authority?: number
  /** Entries the live log keeps. @default 200 */
  logSize?: number
}

export const ConsolePageConfig: Schema<ConsolePageConfig> = described(Schema.object({
  enabled: described(Schema.boolean().default(true), 'Show the Dogu page in Koishi\'s console.', '在 Koishi 控制台中显示 Dogu 页面。'),
  authority: described(Schema.natural().default(4),
    'Console authority needed to use the page (with @koishijs/plugin-auth); without a login, the authority its calls and answers carry.',
    '使用该页面所需的控制台权限等级（加载 @koishijs/plugin-auth 时生效）；无登录时，页面的调用与审批以此等级进行。'),
  logSize: described(Schema.natural().min(1).max(10_000).default(200), 'Entries the live log keeps.', '实时日志保留的条数。'),
}), 'Console page: Dogu\'s debug page in Koishi\'s console.', '控制台页面：Koishi 控制台中的 Dogu 调试页。') as Schema<ConsolePageConfig>

/**
 * Dogu's debug page in Koishi's console (@koishijs/plugin-console): the page of
 * `@dogu/webui`, served as a console entry, and one console listener per API method.
 * The API is `@dogu/webui/console`, the host-free part of @dogu/webui: the build bundles it
 * into lib/, so an install of this package never brings @dogu/webui and the cordis 4 it peers.
 * Calls run with the operator's console authority (the logged-in user's, with
 * @koishijs/plugin-auth), never the authority of a user the form impersonates. The page
 * is an asker for every permission question: the first answer wins, there or in chat.
 *
 * @param dist Where the built page is: this package's `dist/` (Koishi's console serves a
 * plugin's files only from node_modules, so tests pass an installed-looking path).
 */
export function consolePage(ctx: Context, config: ConsolePageConfig = {}, dist = resolve(__dirname, '../dist')) {
  if (config.enabled === false) return
  const authority = config.authority ?? 4
  // Without a login, the console's one operator, named once: `console` (not `console:console`).
  const asker = new ConsoleAsker({ id: 'console', authority })
  const log = new ConsoleLog(config.logSize ?? 200)
  const api = new ConsoleApi({
    registry: ctx.tools.registry,
    get permissions() { return ctx.get('permissions')?.engine ? ctx.get('permissions') : undefined },
    get background() { return ctx.get('background') },
    // The Log view's records: Dogu's `ctx.audit`, when loaded (looked up on each request).
    get audit() { return auditSource(ctx.get('audit')) },
    changeLogs: () => [],
    asker,
    log,
    authority,
  })

  ctx.on('tools/call-start', (info: CallInfo) => log.callStart(info))
  ctx.on('tools/call-progress', (info: CallInfo, message: string) => {
    log.callProgress(info, message)
    api.onProgress(info.id, message)
  })
  ctx.on('tools/call-end', (info: CallInfo, result: ToolResult) => log.callEnd(info, result))
  ctx.on('permissions/decision', (event: DecisionEvent) => log.decision(event))
  ctx.permissions.asker(asker.asker)
  ctx.effect(() => () => asker.clear())

  // The page's authority goes to the client too: registered on the page's route, it lets
  // @koishijs/plugin-auth send a logged-out visitor to its login and back to /dogu after.
  const entry = ctx.console.addEntry({ dev: resolve(dist, '../client/index.ts'), prod: dist }, (): ConsolePageData => ({ authority, login: !!ctx.get('auth') }))
  ctx.on('internal/service', (name) => { if (name === 'auth') entry.refresh() })
  const koishiConsole = ctx.console
  const addListener = koishiConsole.addListener.bind(koishiConsole) as AddListener
  for (const method of ConsoleApi.methods()) {
    const name = `${LISTENER_PREFIX}${method}`
    // The console keeps listeners until they are deleted: they go with the plugin.
    ctx.effect(() => {
      addListener(name, async function (this: Client, payload?: unknown) {
        return reply(api, method, payload, operatorOf(this, authority))
      }, { authority })
      return () => {
        delete koishiConsole.listeners[name]
      }
    })
  }
}

/** `ctx.audit` as the console reads it: anything with a `query`, or nothing. */
function auditSource(service: unknown): ConsoleHost['audit'] {
  return typeof (service as { query?: unknown } | undefined)?.query === 'function' ? service as ConsoleHost['audit'] : undefined
}

/**
 * The operator behind a console client: the logged-in user, or the console itself. The
 * platform is `console` and the id the login name, so the approver reads `console:admin`
 * wherever it is written as `platform:id` (chat notices, `dogu.audit`, grants), and a rule's
 * `approvers.users: ['console:admin']` names them.
 */
function operatorOf(client: Client | undefined, authority: number): Approver {
  const auth = client?.auth
  // A login without an authority gets none: never the page's default.
  if (auth) return { id: String(auth.name ?? auth.id), platform: 'console', authority: auth.authority ?? 0 }
  return { id: 'console', authority }
}

async function reply(api: ConsoleApi, method: ConsoleMethod, payload: unknown, operator: Approver): Promise<ConsoleReply> {
  try {
    return { value: await api.handle(method, payload, { operator }) }
  } catch (error) {
    if (ConsoleError.is(error)) return { error: errorBody(error) }
    throw error
  }
}
