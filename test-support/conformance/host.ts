import type {
  Asker,
  AuditFilter,
  AuditRecord,
  AuthorizeRequest,
  AuthorizeResult,
  BackgroundEngine,
  BackgroundTask,
  ExecuteOptions,
  Grant,
  ListTasksOptions,
  MaxRunning,
  MiddlewareOptions,
  ModelToolCall,
  PermissionEngine,
  PermissionMode,
  PermissionRequest,
  PermissionRule,
  QuotaRule,
  RunningCall,
  Tool,
  ToolMiddleware,
  ToolOptions,
  ToolRegistry,
  ToolResult,
  Toolset,
  ToolsetOptions,
  WaitTaskOptions,
} from '@dogu/core'
import type { LogGuard } from '../log-guard'

// The contract both hosts keep: what a plugin sees as `ctx.tools`, `ctx.permissions` and
// `ctx.background`. Each host's spec assigns its services to these types, so a name that
// drifts on one host fails the type check before any test runs.

export interface ToolsApi {
  readonly registry: ToolRegistry
  define<A = unknown>(tool: Tool<A> | ToolOptions<A>): () => void
  toolset(options: ToolsetOptions): Toolset
  execute(calls: readonly ModelToolCall[], options: ToolsetOptions & ExecuteOptions): Promise<ToolResult[]>
  list(): Tool[]
  get(name: string): Tool | undefined
  filter(options?: { include?: string[]; exclude?: string[] }): Tool[]
  use(middleware: ToolMiddleware, options?: MiddlewareOptions): () => void
  redact(values: Iterable<string>): () => void
}

export interface PermissionsApi {
  readonly engine: PermissionEngine
  authorize(request: AuthorizeRequest): AuthorizeResult
  rule(rule: PermissionRule): () => void
  asker(handler: Asker): () => void
  grants(): Readonly<Grant>[]
  revoke(id: string): boolean
  setMode(sessionId: string, mode: PermissionMode | undefined): void
  modeOf(sessionId: string): PermissionMode
  endSession(sessionId: string): void
  pending(): Readonly<PermissionRequest>[]
}

export interface BackgroundApi {
  readonly engine: BackgroundEngine
  adopt(call: RunningCall): BackgroundTask
  get(id: string): BackgroundTask | undefined
  list(options?: ListTasksOptions): BackgroundTask[]
  wait(id: string, options: WaitTaskOptions): Promise<BackgroundTask | undefined>
  cancel(id: string, reason?: string): Promise<BackgroundTask | undefined>
}

/** `ctx.audit`, as far as the suite reads it. */
export interface AuditApi {
  query(filter?: AuditFilter): Promise<AuditRecord[]>
}

/** What a plugin of the suite is handed: the services, as on either host. */
export interface PluginContext {
  tools: ToolsApi
  permissions: PermissionsApi
  background: BackgroundApi
}

/** A plugin as both hosts load it: an object with a name, its injections and `apply`. */
export interface HostPlugin<C = any> {
  name: string
  inject?: string[]
  Config?: (config?: C) => C
  apply(ctx: PluginContext, config: C): void
}

export interface LoadedPlugin<C = any> {
  /** Unloads the plugin; resolves once it is gone. */
  dispose(): Promise<void>
  /** Reloads the plugin (its config updated to `config`, or the same one, forced); resolves once it is active again. */
  reload(config?: C): Promise<void>
}

export interface AppOptions {
  /** A fresh directory for the stores: `permissions.json` and `background.json` in it. */
  dir: string
  /** Dogu's permissions service and its config; `false`: not loaded. */
  permissions?: false | { rules?: PermissionRule[]; mode?: PermissionMode; askTimeout?: number }
  /** Dogu's background service and its config; `false`: not loaded. */
  background?: false | { maxTasks?: number }
  /** The tools service's config (the host's `tools` config): quotas and caps on running calls. */
  tools?: { quotas?: QuotaRule[]; maxRunning?: MaxRunning; timeout?: number }
  /** Load Dogu's audit service, its records in `audit.jsonl` of `dir`. @default false */
  audit?: boolean
}

export interface HostApp {
  readonly tools: ToolsApi
  readonly permissions: PermissionsApi
  readonly background: BackgroundApi
  /** `ctx.audit`, when `audit` was asked for. */
  readonly audit?: AuditApi
  /** Errors the host reported (a listener that threw, a plugin that failed), in order. */
  readonly errors: unknown[]
  /** The app's log guard (test-support/log-guard.ts): a test declares the errors and warnings it provokes. */
  readonly guard: LogGuard
  /** Loads a plugin; resolves once it is active, rejects with what its `apply` threw. */
  plugin<C>(plugin: HostPlugin<C>, config?: C): Promise<LoadedPlugin<C>>
  /** Listens to one of the app's events. */
  on(name: string, listener: (...args: any[]) => void): void
  /** Unloads one of Dogu's services and waits until its store is written. */
  unload(service: 'permissions' | 'background'): Promise<void>
  /** Stops the whole app as a shutdown does, and waits until the stores are written. */
  stop(): Promise<void>
}

/** One host under test: its name, and a factory of fresh apps with Dogu loaded. */
export interface ConformanceHost {
  /** Shown in the tests' names: `Cordis 4`, `Koishi 4`. */
  name: string
  create(options: AppOptions): Promise<HostApp>
}
