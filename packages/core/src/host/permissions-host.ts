import type { AuthorizeRequest, AuthorizeResult } from '../permission-gate'
import type { Asker, Grant, PermissionEngine, PermissionEngineOptions, PermissionMode, PermissionRequest, PermissionRule } from '../permissions'
import type { HostEmitter } from './host-emitter'
import { callingPlugin, type HostBaseClass, type HostPlugin, pluginEffect } from './host-plugin'

/**
 * Dogu's half of `ctx.permissions` for any host: the methods of the contract over a
 * `PermissionEngine`. `rule()` and `asker()` belong to the calling plugin and go away with
 * it. The host's class builds the engine and its grant store, attaches it to the registry
 * with `attachEngine(registry, 'permissions', engine)`, and stops it when it stops.
 *
 * The methods read only `this.engine` and `this[callingPlugin]()`, so a host that does not
 * own `ctx.permissions` (Koishi) may also put them on the framework's object beside those two.
 *
 * @example
 * export class PermissionService extends permissionsHost(Service) {
 *   readonly engine = new PermissionEngine({ rules: [{ permission: 'fs.read', decision: 'allow' }] })
 *   [callingPlugin]() { return hostPlugin(this.ctx) }
 * }
 */
export function permissionsHost<B extends HostBaseClass>(Base: B) {
  abstract class PermissionsHost extends Base {
    /** The host-free engine; it is `ctx.tools.registry.permissions` while the service is loaded. */
    abstract readonly engine: PermissionEngine

    /** The plugin calling a method now; see `HostPlugin`. */
    abstract [callingPlugin](): HostPlugin

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
      const plugin = this[callingPlugin]()
      return pluginEffect(plugin, () => this.engine.addRule(rule, plugin.label), ruleLabel(rule))
    }

    /**
     * Registers an asker for the calling plugin: it is shown permission requests and
     * answers through its return value or `respond`. See `Asker`.
     */
    asker(handler: Asker): () => void {
      return pluginEffect(this[callingPlugin](), () => this.engine.addAsker(handler), 'ctx.permissions.asker()')
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
  return PermissionsHost
}

/**
 * The config every host's permissions service takes, but where grants are stored (each
 * host says where its `storePath` is relative to). `R` is the host's rule type.
 */
export interface PermissionsHostConfig<R extends PermissionRule = PermissionRule> {
  rules?: R[]
  /** @default 'default' */
  mode?: PermissionMode
  /** @default 300_000 */
  askTimeout?: number
  /** @default 4 */
  approverAuthority?: number
  /** @default true */
  callerMayApprove?: boolean
}

/**
 * The engine's options a permissions service's config sets, the same on every host, and
 * its decisions as `permissions/decision` events on `emit` (built only when one listens).
 */
export function permissionEngineOptions(config: PermissionsHostConfig, emit: HostEmitter): Pick<PermissionEngineOptions, 'rules' | 'mode' | 'askTimeout' | 'approvers' | 'onDecision' | 'wantsDecision'> {
  return {
    rules: config.rules,
    mode: config.mode,
    askTimeout: config.askTimeout,
    approvers: { authority: config.approverAuthority, caller: config.callerMayApprove },
    onDecision: (event) => emit('permissions/decision', event),
    wantsDecision: () => emit.listens('permissions/decision'),
  }
}

/** `ctx.permissions.rule("deploy:run")`: how a host's effect view names a rule. */
export function ruleLabel(rule: PermissionRule): string {
  return `ctx.permissions.rule(${JSON.stringify(typeof rule?.permission === 'string' ? rule.permission : '?')})`
}
