import { dirname, join, resolve } from 'node:path'
import {
  type Asker,
  attachEngine,
  type AuthorizeRequest,
  type AuthorizeResult,
  callingPlugin,
  type ClosedRequest,
  DatabaseGrantStore,
  DatabasePendingStore,
  type DecisionEvent,
  type Grant,
  type GrantStore,
  type HostPlugin,
  JsonFileGrantStore,
  JsonFilePendingStore,
  type MinatoDatabase,
  type PendingStore,
  PERMISSION_MODES,
  PermissionEngine,
  PermissionError,
  type PermissionMode,
  type PermissionRequest,
  type PermissionRule,
  permissionEngineOptions,
  permissionsHost,
  type PermissionsHostConfig,
  pluginEffect,
  ruleLabel,
} from '@dogu/core'
import { type Context, Schema, type Session } from 'koishi'
import { keepClosedRequests } from './closed-requests'
import { defaultInstanceId } from './instance-id'
import { followDatabase, koishiDatabase } from './koishi-database'
import { eventEmitter } from './koishi-events'
import { koishiLogger } from './koishi-logger'
import { koishiPlugin } from './koishi-plugin'
import { type KoishiDoguSession, koishiPermissionCondition, koishiPermissionNames, koishiUser } from './koishi-permission'
import { described } from './schema-text'
import { doguSession } from './session'

declare module 'koishi' {
  // Koishi's own service: Dogu's methods are added to it while the plugin is loaded.
  interface Permissions extends DoguPermissions {}

  interface Events<C extends Context = Context> {
    /** Every permission decision, naming the rule, grant, mode, default or answer that made it. */
    'permissions/decision'(event: DecisionEvent): void
    /**
     * A kept request (`permissions.durable`) closed without being asked again: expired while
     * the bot was down, a tool's own question from inside a run, masked secrets, a corrupt
     * record, or past `maxPending`. The chat approvals tell its channel.
     */
    'permissions/closed'(closed: ClosedRequest): void
  }
}

/** A permission rule as Koishi's config and plugins write it: Dogu's fields plus `koishiPermission`. */
export interface KoishiPermissionRule extends PermissionRule {
  /**
   * Koishi permission names the caller must all hold, checked with Koishi's own
   * `ctx.permissions.test` (`authority:3`, `dogu.deploy`, names other plugins provide).
   */
  koishiPermission?: string | string[]
}

/**
 * Dogu's half of `ctx.permissions` on Koishi: the same names as `@dogu/cordis`'
 * `PermissionService`, beside Koishi's own `define`, `provide`, `inherit`, `depend`, `test`,
 * `list`, which stay as they are. A tool plugin calling `ctx.permissions.authorize(…)` runs
 * on both hosts.
 */
export interface DoguPermissions {
  /** The host-free engine; it is `ctx.tools.registry.permissions` while Dogu is loaded. */
  readonly engine: PermissionEngine
  /** Decides a call: `allow`, `ask` or `deny`, with the reason and what decided it. */
  authorize(request: AuthorizeRequest): AuthorizeResult
  /**
   * Adds a rule for the calling plugin and returns its disposer; the rule goes away with
   * the plugin. A bad rule throws a `PermissionError` (`INVALID_RULE`) naming the field.
   */
  rule(rule: KoishiPermissionRule): () => void
  /** Registers an asker for the calling plugin; it goes away with the plugin. See `Asker`. */
  asker(handler: Asker): () => void
  /** Every remembered grant, oldest first. */
  grants(): Readonly<Grant>[]
  /** Removes a grant (from the store too, for `always`). True when it existed. */
  revoke(id: string): boolean
  /** Sets a session's mode; `undefined` returns it to the configured mode. */
  setMode(sessionId: string, mode: PermissionMode | undefined): void
  /** The mode in force for a session. */
  modeOf(sessionId: string): PermissionMode
  /** Forgets a session's mode and `session` grants. */
  endSession(sessionId: string): void
  /** Requests waiting for an answer. */
  pending(): Readonly<PermissionRequest>[]
  /**
   * Koishi only: the Dogu session for a Koishi session, with the facts the gate decides
   * on. The authority comes from `session.user` when Koishi loaded it, else from the user
   * table when a database is loaded, else `defaultAuthority`; every Koishi permission the
   * rules name is tested with Koishi's `ctx.permissions.test`, as that user.
   */
  resolveSession(session: Session): Promise<KoishiDoguSession>
}

// cordis 3's `symbols.original`: a traced object behind the context proxy.
const ORIGINAL = Symbol.for('cordis.original')

const Rule: Schema<KoishiPermissionRule> = Schema.object({
  permission: described(Schema.string().required(), 'Permission name glob: `tool:deploy`, `fs.*`, `deploy:*`.', '权限名通配：`tool:deploy`、`fs.*`、`deploy:*`。'),
  target: described(Schema.string(), 'Path glob over the target (`src/**`, `prod`); `*` stops at `/`.', '目标的路径通配（`src/**`、`prod`）；`*` 不跨越 `/`。'),
  command: described(Schema.string(), 'Command-line glob over the target (`git status*`); `*` matches anything. Exclusive with target.', '目标的命令行通配（`git status*`）；`*` 匹配任意字符。与 target 二选一。'),
  users: described(Schema.array(String), 'User ids, plain or `platform:id`. Empty: anyone.', '用户 ID，可写 `平台:ID`。留空表示任何人。'),
  channels: described(Schema.array(String), 'Channel ids, plain or `platform:id`. Empty: anywhere.', '频道 ID，可写 `平台:ID`。留空表示任何频道。'),
  guilds: described(Schema.array(String), 'Guild ids, plain or `platform:id`. Empty: anywhere.', '群组 ID，可写 `平台:ID`。留空表示任何群组。'),
  platforms: described(Schema.array(String), 'Platforms. Empty: any.', '平台。留空表示任何平台。'),
  authority: described(Schema.natural(), 'Minimum Koishi authority of the caller.', '调用者的最低 Koishi 权限等级。'),
  sandboxed: described(Schema.boolean(), 'Matches when the command runs in an OS sandbox (true), or when it does not (false; also tools that never say).', '命令在操作系统沙箱中运行时匹配（true），或不在沙箱中时匹配（false，也包括未声明的工具）。'),
  koishiPermission: described(Schema.array(String).role('perms'), 'Koishi permissions the caller must all hold, checked with Koishi\'s permission system.', '调用者必须全部拥有的 Koishi 权限，由 Koishi 的权限系统判定。'),
  approvers: described(Schema.object({
    users: described(Schema.array(String), 'User ids, plain or `platform:id`, who may answer.', '可以回答的用户 ID，可写 `平台:ID`。'),
    authority: described(Schema.natural(), 'Anyone at or above this Koishi authority may answer.', '权限等级不低于此值的用户可以回答。'),
    permissions: described(Schema.array(String).role('perms'), 'Koishi permissions: anyone holding one of them may answer.', 'Koishi 权限：拥有其中任一权限的用户可以回答。'),
    caller: described(Schema.boolean(), 'The caller may answer their own request. Default: callerMayApprove.', '调用者可以回答自己的请求。默认同 callerMayApprove。'),
  }), 'Ask rules only: who may answer the question (any of users, authority, permissions), instead of approverAuthority.', '仅用于 ask 规则：谁可以回答该请求（满足 users、authority、permissions 之一即可），代替 approverAuthority。'),
  decision: described(Schema.union(['allow', 'ask', 'deny'] as const).required(), 'allow, ask or deny.', '允许（allow）、询问（ask）或拒绝（deny）。'),
  name: described(Schema.string(), 'A label for audit logs and denial messages.', '规则名，用于审计日志与拒绝说明。'),
}) as Schema<KoishiPermissionRule>

/** The fields of the `permissions` section of the Dogu plugin's config. */
export const permissionsFields = {
  rules: described(Schema.array(Rule),
    'Rules: any matching deny wins, then ask, then allow; no match → read allow, write/exec ask.',
    '规则：匹配的 deny 优先，其次 ask，再次 allow；无匹配时只读工具允许、写入/执行工具询问。'),
  mode: described(Schema.union(Object.keys(PERMISSION_MODES) as PermissionMode[]).default('default'),
    'Mode of sessions without their own. Explicit deny rules win in every mode.',
    '未单独设置模式的会话所用的模式。任何模式下显式 deny 规则都优先。'),
  askTimeout: described(Schema.natural().min(1).role('ms').default(300_000),
    'Milliseconds a permission request waits for an answer before it is denied.',
    '权限请求等待回答的时间（毫秒），超时即拒绝。'),
  approverAuthority: described(Schema.natural().default(4),
    'Users at or above this authority may answer anyone\'s permission request.',
    '权限等级不低于此值的用户可以回答任何人的权限请求。'),
  callerMayApprove: described(Schema.boolean().default(true),
    'The calling user may answer their own permission request.',
    '调用者可以回答自己的权限请求。'),
  storePath: described(Schema.string(),
    'JSON file for "always" grants without a database. Default: data/dogu/permissions.json under Koishi\'s base directory. With a database, grants live in the dogu_grant table and this file is migrated into it once.',
    '未加载数据库时保存“总是允许”授权的 JSON 文件。默认：Koishi 根目录下的 data/dogu/permissions.json。加载数据库后授权保存在 dogu_grant 表中，此文件会被迁移进表一次。'),
  syncInterval: described(Schema.natural().min(100).role('ms').default(5_000),
    'With a database: milliseconds between reads of the grant table, the longest a grant given or revoked by another instance takes to apply here.',
    '加载数据库时：两次读取授权表之间的毫秒数，即其他实例授予或撤销的授权在本实例生效的最长延迟。'),
  durable: described(Schema.boolean().default(true),
    'Keep open permission requests across restarts: after a restart each is posted again, and an answer then runs the call once, as a background task. In the dogu_pending table with a database, else in pending.json beside the grants file. Off: a request lives as long as the process.',
    '让未回答的权限请求在重启后保留：重启后每个请求会重新发出，之后的回答会把调用作为后台任务运行一次。加载数据库时保存在 dogu_pending 表中，否则保存在授权文件旁的 pending.json。关闭后请求只在进程运行期间有效。'),
  maxPending: described(Schema.natural().min(1).default(1_000),
    'Most permission requests kept open at once; past it the oldest expire first.',
    '同时保留的未回答权限请求的最大数量；超出时最早的请求先过期。'),
}

/** `defaultAuthority`: the Dogu plugin has it at the top of its config. */
export const defaultAuthoritySchema = described(Schema.natural().default(1),
  'Authority of a caller Koishi knows nothing about (no database, or no user record), for `authority` rules and approvals.',
  'Koishi 无法得知权限等级的调用者（未加载数据库或无用户记录）所用的权限等级，用于 authority 规则与审批。')

/**
 * Dogu's permission gate on Koishi. Koishi already provides `ctx.permissions`, so this
 * plugin provides no service: while it is loaded, Dogu's methods (`DoguPermissions`) are
 * added to Koishi's permissions object, and its engine is the gate of `ctx.tools`.
 * Unloading it removes both: tool calls fail closed again.
 *
 * Methods called as `ctx.permissions.x()` see the caller's context as `this.ctx` (cordis
 * 3's tracing proxy), so `rule()` and `asker()` belong to the plugin that called them.
 */
export class PermissionService {
  static inject = { database: { required: false } }

  static Config: Schema<PermissionService.Config> = Schema.object({
    ...permissionsFields,
    defaultAuthority: defaultAuthoritySchema,
    instanceId: described(Schema.string(),
      'This instance\'s name in the pending requests (which instance asked, which claimed one); the same across restarts. The Dogu plugin passes background.instanceId. Default: host name and base directory.',
      '本实例在待回答请求中的名称（哪个实例提问、哪个实例认领）；重启前后不变。Dogu 插件会传入 background.instanceId。默认：主机名加 Koishi 根目录。'),
  })

  readonly engine: PermissionEngine
  private readonly defaultAuthority: number
  /** How many rules name each Koishi permission: the names `resolveSession` tests. */
  private readonly names = new Map<string, number>()

  constructor(private readonly ctx: Context, config: PermissionService.Config = {}) {
    this.defaultAuthority = config.defaultAuthority ?? 1
    const logger = koishiLogger(ctx)
    const path = resolve(ctx.baseDir ?? process.cwd(), config.storePath ?? 'data/dogu/permissions.json')
    // With a database, grants are shared by every instance on it; the file is migrated once.
    const storeFor = (database: MinatoDatabase | undefined): GrantStore => database
      ? new DatabaseGrantStore({ database, logger, migrateFrom: path })
      : new JsonFileGrantStore(path)
    // Open requests (`durable`): in the dogu_pending table, shared by every instance on the
    // database; without one, in pending.json beside the grants file, for this instance alone.
    const durable = config.durable !== false
    const pendingPath = join(dirname(path), 'pending.json')
    const pendingFor = (database: MinatoDatabase | undefined): PendingStore => database
      ? new DatabasePendingStore({ database, logger })
      : new JsonFilePendingStore(pendingPath)
    let store = storeFor(koishiDatabase(ctx))
    let pendingStore = durable ? pendingFor(koishiDatabase(ctx)) : undefined
    const emit = eventEmitter(ctx)
    const closed = keepClosedRequests()
    this.engine = new PermissionEngine({
      ...permissionEngineOptions(config, emit),
      conditions: { koishiPermission: koishiPermissionCondition },
      store,
      logger,
      ...(pendingStore ? {
        durable: true,
        pendingStore,
        maxPending: config.maxPending ?? 1_000,
        instanceId: config.instanceId || defaultInstanceId(ctx.baseDir ?? process.cwd()),
        // The bot the call came through: the question is posted again by it after a restart.
        sessionHost: (session) => (session as KoishiDoguSession).host,
        onClosed: (request) => {
          closed.push(request)
          emit('permissions/closed', request)
        },
      } : { durable: false }),
    })
    const engine = this.engine
    closed.attach(engine)
    // authorize() is synchronous, so it cannot read the table: other instances' grants and
    // revocations arrive by this poll (and this instance's own at once), and with them their
    // pending requests (asked, answered or closed there).
    const poll = () => store instanceof DatabaseGrantStore
      // Not while the app stops: its database driver may already have closed its pool.
      ? ctx.setInterval(() => void engine.refreshGrants(() => ctx.root.lifecycle.isActive), config.syncInterval ?? 5_000)
      : undefined
    let stopPolling = poll()
    // The database may start after this service, be reloaded, or go: the engine stays (its
    // askers, rules, modes and waiting requests with it), and its stores switch.
    followDatabase(ctx, {
      switch: (database) => {
        stopPolling?.()
        void engine.useStore(store = storeFor(database))
        if (pendingStore) {
          // Gone while the app runs: its table cannot be written (the open requests move to the file).
          if (!database && pendingStore instanceof DatabasePendingStore) pendingStore.detach('the database went away')
          void engine.usePendingStore(pendingStore = pendingFor(database))
        }
        stopPolling = poll()
      },
      lost: (reason) => {
        stopPolling?.()
        if (store instanceof DatabaseGrantStore) store.detach(reason)
        if (pendingStore instanceof DatabasePendingStore) pendingStore.detach(reason)
      },
    })
    for (const rule of config.rules ?? []) this.count(rule, 1)
    ctx.effect(() => install(ctx, this.methods()))
    // Reload or unload: waiting calls end denied, and grants are saved before the next start.
    ctx.effect(() => () => void engine.stop('the permissions service stopped (reloaded or unloaded) while the call waited for an answer'))
    // `koishi start` on SIGINT / SIGTERM awaits `exit`, then exits without stopping the app:
    // waiting calls end here (kept requests as interrupted, for the audit trail's last write)
    // and the stores' writes land while the database driver is still open.
    ctx.on('exit', () => engine.stop('the bot stopped while the call waited for an answer'))
    // The gate, once remembered grants are loaded (so a restart does not ask again what was
    // granted), on whichever `ctx.tools` is loaded, for as long as both are.
    ctx.on('ready', async () => {
      await engine.ready
      if (ctx.scope.uid === null) return
      ctx.inject(['tools'], (ctx) => {
        ctx.effect(() => attachEngine(ctx.tools.registry, 'permissions', engine))
      })
    })
  }

  /**
   * Dogu's methods, as they go onto Koishi's permissions object: the host layer's, which
   * read `this.engine` and `this[callingPlugin]()` there (`this.ctx` is the caller, through
   * cordis 3's tracing proxy), with `rule` also counting the Koishi permissions rules name.
   */
  private methods(): DoguMethods {
    const service = this
    class Methods extends permissionsHost(Object) implements DoguPermissions {
      override [callingPlugin](): HostPlugin {
        return koishiPlugin((this as { ctx?: Context }).ctx ?? service.ctx)
      }

      override readonly engine = service.engine

      override rule(rule: KoishiPermissionRule): () => void {
        const plugin = this[callingPlugin]()
        return pluginEffect(plugin, () => {
          const remove = this.engine.addRule(rule, plugin.label)
          service.count(rule, 1)
          return () => {
            remove()
            service.count(rule, -1)
          }
        }, ruleLabel(rule))
      }

      resolveSession(session: Session): Promise<KoishiDoguSession> {
        return service.resolveSession(session)
      }
    }
    return new Methods()
  }

  private async resolveSession(session: Session): Promise<KoishiDoguSession> {
    const user = await this.userOf(session)
    const authority = typeof user?.authority === 'number' ? user.authority : this.defaultAuthority
    const mapped: KoishiDoguSession = { ...doguSession(session, { defaultAuthority: this.defaultAuthority }), authority }
    // The bot it came through: a question asked again after a restart is posted by the same bot.
    if (session.selfId) mapped.host = { selfId: session.selfId }
    const names = [...this.names.keys()]
    if (!names.length) return { ...mapped, koishiPermissions: Object.freeze([]) }
    // Koishi's checks read `session.user`: they see the user as resolved here, so that
    // `authority:N` means the same authority as the `authority` field.
    const asUser = session.user === user ? session : Object.create(session, { user: { value: { ...user, authority } } })
    const cache = new Map<string, Promise<boolean>>()
    const results = await Promise.all(names.map(async (name) => {
      try {
        return await this.ctx.permissions.test([name], asUser, cache)
      } catch (error) {
        koishiLogger(this.ctx).warn('testing Koishi permission %s failed: %s', name, error)
        return false
      }
    }))
    return { ...mapped, koishiPermissions: Object.freeze(names.filter((_, i) => results[i])) }
  }

  /** The user as Koishi loaded it, completed from the user table when it lacks an authority. */
  private userOf(session: Session): Promise<{ authority?: number; permissions?: string[] } | undefined> {
    return koishiUser(this.ctx, session)
  }

  private count(rule: KoishiPermissionRule, delta: number) {
    for (const name of koishiPermissionNames(rule?.koishiPermission) ?? []) {
      const count = (this.names.get(name) ?? 0) + delta
      if (count > 0) this.names.set(name, count)
      else this.names.delete(name)
    }
  }
}

/** The names Dogu adds to Koishi's permissions object, in the order a conflict names them. */
const DOGU_NAMES = ['engine', 'authorize', 'rule', 'asker', 'grants', 'revoke', 'setMode', 'modeOf', 'endSession', 'pending', 'resolveSession'] as const satisfies readonly (keyof DoguPermissions)[]

/** Dogu's methods and the host layer's hook they call. */
type DoguMethods = DoguPermissions & { [callingPlugin](): HostPlugin }

/**
 * Adds Dogu's methods to Koishi's permissions object (the one behind every context's
 * tracing proxy) and returns their removal. Koishi's own members are never replaced.
 */
function install(ctx: Context, methods: DoguMethods): () => void {
  const traced = ctx.root.permissions
  const target = ((traced as any)[ORIGINAL] ?? traced) as Record<PropertyKey, unknown>
  const taken = DOGU_NAMES.filter((key) => key in target)
  if (taken.length) {
    throw new PermissionError('INVALID_OPTIONS', `ctx.permissions already has ${taken.join(', ')}: is another Dogu permissions service loaded in this app?`)
  }
  const entries: [PropertyKey, unknown][] = [...DOGU_NAMES.map((key) => [key, methods[key]] as [PropertyKey, unknown]), [callingPlugin, methods[callingPlugin]]]
  for (const [key, value] of entries) {
    Object.defineProperty(target, key, { value, configurable: true, writable: false, enumerable: false })
  }
  return () => {
    for (const [key, value] of entries) {
      if (target[key] === value) delete target[key]
    }
  }
}

export namespace PermissionService {
  export interface Config extends PermissionsHostConfig<KoishiPermissionRule> {
    /** @default 'data/dogu/permissions.json' (under Koishi's base directory) */
    storePath?: string
    /** With a database: milliseconds between reads of the grant table. @default 5_000 */
    syncInterval?: number
    /** @default 1 */
    defaultAuthority?: number
    /** Keep open requests across restarts (`dogu_pending`, else `pending.json` beside `storePath`). @default true */
    durable?: boolean
    /** Most requests kept open at once; past it the oldest expire first. @default 1_000 */
    maxPending?: number
    /** This instance's name in the pending store. @default `${hostname}:${baseDir}` */
    instanceId?: string
  }
}
