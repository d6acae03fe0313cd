import { resolve } from 'node:path'
import {
  attachEngine,
  callingPlugin,
  type DecisionEvent,
  type HostPlugin,
  JsonFileGrantStore,
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
  })

  override readonly engine: PermissionEngine

  constructor(ctx: Context, config: PermissionService.Config = {}) {
    super(ctx, 'permissions')
    const logger = cordisLogger(ctx)
    this.engine = new PermissionEngine({
      ...permissionEngineOptions(config, eventEmitter(ctx)),
      store: new JsonFileGrantStore(resolve(config.storePath ?? 'data/dogu/permissions.json')),
      logger,
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
  }
}
