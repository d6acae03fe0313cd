import { resolve } from 'node:path'
import {
  type Asker,
  type AuthorizeRequest,
  type AuthorizeResult,
  type DecisionEvent,
  type Grant,
  JsonFileGrantStore,
  PERMISSION_MODES,
  PermissionEngine,
  type PermissionMode,
  type PermissionRequest,
  type PermissionRule,
} from '@dogu/core'
import { type Context, Service } from 'cordis'
import Schema from 'schemastery'
import { eventEmitter } from './cordis-events'
import { cordisLogger } from './cordis-logger'

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
 * `rule()` and `asker()` belong to the plugin that called them and go away with it.
 */
export class PermissionService extends Service {
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

  /** The host-free engine; it is `ctx.tools.registry.permissions` while this service is loaded. */
  readonly engine: PermissionEngine

  constructor(ctx: Context, config: PermissionService.Config = {}) {
    super(ctx, 'permissions')
    const logger = cordisLogger(ctx)
    const emit = eventEmitter(ctx)
    this.engine = new PermissionEngine({
      rules: config.rules,
      mode: config.mode,
      askTimeout: config.askTimeout,
      approvers: { authority: config.approverAuthority, caller: config.callerMayApprove },
      store: new JsonFileGrantStore(resolve(config.storePath ?? 'data/dogu/permissions.json')),
      onDecision: (event) => emit('permissions/decision', event),
      wantsDecision: () => emit.listens('permissions/decision'),
      logger,
    })
    const engine = this.engine
    ctx.effect(() => {
      const registry = ctx.tools.registry
      registry.permissions = engine
      return () => {
        if (registry.permissions === engine) registry.permissions = undefined
      }
    }, 'ctx.permissions: gate ctx.tools')
    // Reload or unload: waiting calls end denied, and grants are saved before the next start.
    ctx.effect(() => () => engine.stop('the permissions service stopped (reloaded or unloaded) while the call waited for an answer'), 'ctx.permissions: end pending requests')
  }

  /** Active once remembered grants are loaded, so a restart does not ask again what was granted. */
  async [Service.init]() {
    await this.engine.ready
  }

  /** Decides a call: `allow`, `ask` or `deny`, with the reason and what decided it. */
  authorize(request: AuthorizeRequest): AuthorizeResult {
    return this.engine.authorize(request)
  }

  /**
   * Adds a rule for the calling plugin and returns its disposer; the rule goes away with
   * the plugin. A bad rule throws a `PermissionError` (`INVALID_RULE`) naming the field.
   *
   * @example
   * ctx.permissions.rule({ permission: 'deploy:run', target: 'prod', authority: 4, decision: 'allow' })
   */
  rule(rule: PermissionRule): () => void {
    const origin = `plugin "${this.ctx.fiber.name}"`
    const label = `ctx.permissions.rule(${JSON.stringify(typeof rule?.permission === 'string' ? rule.permission : '?')})`
    const dispose = this.ctx.effect(() => this.engine.addRule(rule, origin), label)
    return () => {
      dispose()
    }
  }

  /**
   * Registers an asker for the calling plugin: it is shown permission requests and
   * answers through its return value or `respond`. See `Asker`.
   */
  asker(handler: Asker): () => void {
    const dispose = this.ctx.effect(() => this.engine.addAsker(handler), 'ctx.permissions.asker()')
    return () => {
      dispose()
    }
  }

  /** Every remembered grant, oldest first. */
  grants(): Readonly<Grant>[] {
    return this.engine.grants()
  }

  /** Removes a grant (from the store too, for `always`). True when it existed. */
  revoke(id: string): boolean {
    return this.engine.revoke(id)
  }

  /** Sets a session's mode; `undefined` returns it to the configured mode. */
  setMode(sessionId: string, mode: PermissionMode | undefined): void {
    this.engine.setMode(sessionId, mode)
  }

  /** The mode in force for a session. */
  modeOf(sessionId: string): PermissionMode {
    return this.engine.modeOf(sessionId)
  }

  /** Forgets a session's mode and `session` grants. */
  endSession(sessionId: string): void {
    this.engine.endSession(sessionId)
  }

  /** Requests waiting for an answer. */
  pending(): Readonly<PermissionRequest>[] {
    return this.engine.pending()
  }
}

export namespace PermissionService {
  export interface Config {
    rules?: PermissionRule[]
    /** @default 'default' */
    mode?: PermissionMode
    /** @default 300_000 */
    askTimeout?: number
    /** @default 4 */
    approverAuthority?: number
    /** @default true */
    callerMayApprove?: boolean
    /** @default 'data/dogu/permissions.json' (relative to the working directory) */
    storePath?: string
  }
}
