import { dirname, join, resolve } from 'node:path'
import {
  attachEngine,
  callingPlugin,
  type ClosedRequest,
  type DecisionEvent,
  type HostPlugin,
  JsonFileGrantStore,
  JsonFilePendingStore,
  PERMISSION_MODES,
  PermissionEngine,
  type PermissionMode,
  type PermissionRule,
  permissionEngineOptions,
  permissionsHost,
  type PermissionsHostConfig,
} from '@dogu/core'
import { type Context, Service } from 'cordis'
import Schema from 'schemastery'
import { eventEmitter } from './cordis-events'
import { cordisLogger } from './cordis-logger'
import { cordisPlugin } from './cordis-plugin'

declare module 'cordis' {
  interface Context {
    permissions: PermissionService
  }

  interface Events<in C extends Context = Context> {
    /** Every permission decision, naming the rule, grant, mode, default or answer that made it. */
    'permissions/decision'(event: DecisionEvent): void
    /**
     * A kept request (`durable`) closed without being asked again (`closed.cause`): expired
     * while the app was down (`expired`), a tool's own question from inside a run (`in-run`),
     * masked secrets (`masked`), a corrupt record (`corrupt`), past `maxPending` (`evicted`), or
     * asked again but its tool still defined by no plugin a minute after the start
     * (`undefined-tool`; the pending file is this app's alone). An asker that posted questions
     * somewhere may tell that place.
     */
    'permissions/closed'(closed: ClosedRequest): void
  }
}

const Rule: Schema<PermissionRule> = Schema.object({
  permission: Schema.string().required().description('Permission name glob: `tool:deploy`, `fs.*`, `deploy:*`.'),
  target: Schema.string().description('Path glob over the target (`src/**`, `prod`); `*` stops at `/`.'),
  command: Schema.string().description('Command-line glob over the target (`git status*`); `*` matches anything. Exclusive with target.'),
  users: Schema.array(String).description('User ids, plain or `platform:id`. Empty: anyone.'),
  channels: Schema.array(String).description('Channel ids, plain or `platform:id`. Empty: anywhere.'),
  guilds: Schema.array(String).description('Guild ids, plain or `platform:id`. Empty: anywhere.'),
  platforms: Schema.array(String).description('Platforms. Empty: any.'),
  authority: Schema.natural().description('Minimum authority of the caller.'),
  sandboxed: Schema.boolean().description('Matches when the command runs in an OS sandbox (true), or when it does not (false; also tools that never say).'),
  approvers: Schema.object({
    users: Schema.array(String).description('User ids, plain or `platform:id`, who may answer.'),
    authority: Schema.natural().description('Anyone at or above this authority may answer.'),
    permissions: Schema.array(String).description('Host permission names; anyone an asker attests holds one may answer.'),
    caller: Schema.boolean().description('The caller may answer their own request. Default: callerMayApprove.'),
  }).description('Ask rules: who may answer the question (any of users, authority, permissions), instead of approverAuthority.'),
  decision: Schema.union(['allow', 'ask', 'deny'] as const).required(),
  name: Schema.string().description('A label for audit logs and denial messages.'),
}) as Schema<PermissionRule>

/**
 * `ctx.permissions`: the permission gate of a Cordis app. While loaded it is the gate of
 * `ctx.tools`; without it, only read tools run.
 *
 * Methods called as `ctx.permissions.x()` see the caller's context as `this.ctx`, so
 * `rule()` and `asker()` belong to the plugin that called them and go away with it. The
 * methods are the host layer's (`permissionsHost` of `@dogu/core`).
 */
export class PermissionService extends permissionsHost(Service) {
  static inject = ['tools']

  static Config: Schema<PermissionService.Config> = Schema.object({
    rules: Schema.array(Rule).description('Rules: any matching deny wins, then ask, then allow; no match → read allow, write/exec ask.'),
    mode: Schema.union(Object.keys(PERMISSION_MODES) as PermissionMode[]).default('default')
      .description('Mode of sessions without their own. Explicit deny rules win in every mode.'),
    askTimeout: Schema.natural().min(1).role('ms').default(300_000)
      .description('Milliseconds a permission request waits for an answer before it is denied.'),
    approverAuthority: Schema.natural().default(4)
      .description('Users at or above this authority may answer anyone\'s permission request.'),
    callerMayApprove: Schema.boolean().default(true)
      .description('The calling user may answer their own permission request.'),
    storePath: Schema.string().description('JSON file for "always" grants. Default: data/dogu/permissions.json under the working directory.'),
    durable: Schema.boolean().default(true)
      .description('Keep open permission requests in pending.json beside the grants file: after a restart they are asked again, and an answer then runs the call once, as a background task. Off: a request lives as long as the process.'),
    maxPending: Schema.natural().min(1).default(1_000)
      .description('Most permission requests kept open at once; past it the oldest expire first.'),
  })

  override readonly engine: PermissionEngine

  constructor(ctx: Context, config: PermissionService.Config = {}) {
    super(ctx, 'permissions')
    const logger = cordisLogger(ctx)
    const emit = eventEmitter(ctx)
    const path = resolve(config.storePath ?? 'data/dogu/permissions.json')
    this.engine = new PermissionEngine({
      ...permissionEngineOptions(config, emit),
      store: new JsonFileGrantStore(path),
      logger,
      // Open requests outlive the process in a file beside the grants (one app per file).
      ...(config.durable !== false ? {
        durable: true,
        pendingStore: new JsonFilePendingStore(join(dirname(path), 'pending.json')),
        maxPending: config.maxPending ?? 1_000,
        onClosed: (closed) => emit('permissions/closed', closed),
      } : { durable: false }),
    })
    const engine = this.engine
    ctx.effect(() => attachEngine(ctx.tools.registry, 'permissions', engine), 'ctx.permissions: gate ctx.tools')
    // Reload or unload: waiting calls end denied, and grants are saved before the next start.
    ctx.effect(() => () => engine.stop('the permissions service stopped (reloaded or unloaded) while the call waited for an answer'), 'ctx.permissions: end pending requests')
  }

  /** Active once remembered grants are loaded, so a restart does not ask again what was granted. */
  async [Service.init]() {
    await this.engine.ready
  }

  override [callingPlugin](): HostPlugin {
    return cordisPlugin(this.ctx)
  }
}

export namespace PermissionService {
  export interface Config extends PermissionsHostConfig {
    /** @default 'data/dogu/permissions.json' (relative to the working directory) */
    storePath?: string
    /** Keep open requests across restarts, in `pending.json` beside `storePath`. @default true */
    durable?: boolean
    /** Most requests kept open at once; past it the oldest expire first. @default 1_000 */
    maxPending?: number
  }
}
