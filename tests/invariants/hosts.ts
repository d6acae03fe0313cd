import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { AuditRecord, ModelToolCall, PermissionRule, QuotaRule, MaxRunning, PermissionMode, Session, ToolResult, Toolset, ExecuteOptions, ToolsetOptions } from '@dogu/core'
import { Context } from 'cordis'
import DoguCordis from '../../packages/cordis/src'
import * as DoguKoishi from '../../packages/koishi/src'
import { WebUI } from '../../packages/webui/src'
import type { HostPlugin } from '../../test-support/conformance'
import { guardLogs, type LogGuard } from '../../test-support/log-guard'
import { ChatChannel } from './chat-channel'
import { App, Memory, MockBot } from './koishi-modules'
import type { HostSpec } from './scenario'

// The two hosts as a user loads them: Cordis 4 with the `Dogu` plugin (docs/getting-started.md),
// optionally with the WebUI console; Koishi with the mock adapter, a database (minato's memory
// driver) and koishi-plugin-dogu, asking in chat or not. A run gets a fresh app; `plugin`
// loads the harness's own plugin into it.

export interface DoguConfig {
  dir: string
  mode: PermissionMode
  rules: PermissionRule[]
  askTimeout: number
  repair: boolean
  quotas: QuotaRule[]
  maxRunning?: MaxRunning
  maxRecords: number
  /** `permissions.durable`; absent: the default. */
  durable?: boolean
}

export interface RunApp {
  readonly guard: LogGuard
  /** What `internal/error` carried. */
  readonly errors: unknown[]
  execute(calls: ModelToolCall[], options: ToolsetOptions & ExecuteOptions): Promise<ToolResult[]>
  /** The session's toolset, as a framework adapter takes it (`ctx.tools.toolset({ session })`). */
  toolset(session: Session): Toolset
  audit(): Promise<AuditRecord[]>
  /** What the pending store holds now (`permissions.durable`), as text: Cordis's pending.json, Koishi's dogu_pending rows. */
  pendingStore(): Promise<string>
  plugin(plugin: HostPlugin): Promise<void>
  on(name: string, listener: (...args: any[]) => void): void
  /** The mock channel the bot asks in, when the host asks in chat. */
  readonly chat?: ChatChannel
  /** Calls a console method through the WebUI's HTTP API, as the page does, when the console is loaded. */
  readonly console?: (method: string, payload?: unknown) => Promise<unknown>
  stop(): Promise<void>
}

function sections(config: DoguConfig) {
  return {
    tools: { repair: config.repair, quotas: config.quotas, ...(config.maxRunning ? { maxRunning: config.maxRunning } : {}) },
    permissions: { storePath: join(config.dir, 'permissions.json'), mode: config.mode, rules: config.rules, askTimeout: config.askTimeout, ...(config.durable === undefined ? {} : { durable: config.durable }) },
    background: { storePath: join(config.dir, 'background.json') },
    audit: { storePath: join(config.dir, 'audit.jsonl'), maxRecords: config.maxRecords },
  }
}

/** A console method by POST, as the page calls it; a refusal is an error with the console's words. */
async function consoleClient(base: string) {
  return async (method: string, payload: unknown = {}) => {
    const response = await fetch(`${base}/api/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(payload),
      signal: AbortSignal.timeout(20_000),
    })
    const body = await response.json()
    if (!response.ok) throw new Error(`console ${method}: ${response.status} ${JSON.stringify(body)}`)
    return body
  }
}

async function cordisApp(host: HostSpec, config: DoguConfig): Promise<RunApp> {
  const ctx = new Context()
  const guard = guardLogs(ctx)
  const errors: unknown[] = []
  ctx.on('internal/error', (error) => { errors.push(error) })
  await ctx.plugin(DoguCordis, sections(config))
  const auditLog = ctx.audit.log
  // A free loopback port: the console asks for no token there (docs/webui.md).
  if (host.console) await ctx.plugin(WebUI, { port: 0 })
  return {
    guard,
    errors,
    ...(host.console ? { console: await consoleClient(ctx.webui.url) } : {}),
    execute: (calls, options) => ctx.tools.execute(calls, options),
    toolset: (session) => ctx.tools.toolset({ session }),
    audit: () => ctx.audit.query({ limit: 100_000 }),
    pendingStore: () => readFile(join(config.dir, 'pending.json'), 'utf8').catch(() => ''),
    async plugin(plugin) {
      await ctx.plugin(plugin as any)
    },
    on: (name, listener) => void ctx.on(name as any, listener),
    async stop() {
      await ctx.fiber.dispose()
      await auditLog?.stop()
    },
  }
}

async function koishiApp(host: HostSpec, config: DoguConfig): Promise<RunApp> {
  const app = new App()
  const guard = guardLogs(app)
  const errors: unknown[] = []
  app.on('internal/error', (error) => { errors.push(error) })
  const mock = app.plugin(MockBot, { selfId: '514' })
  app.plugin((Memory.default ?? Memory) as any)
  await app.start()
  const settle = () => app.lifecycle.flush()
  const chat = host.approver === 'chat'
  app.plugin(DoguKoishi, {
    approvals: { enabled: chat },
    notices: { enabled: false },
    ...sections(config),
  } as DoguKoishi.Config)
  await settle()
  const auditLog = app.get('audit')?.log
  return {
    guard,
    errors,
    ...(chat ? { chat: await ChatChannel.open(app) } : {}),
    execute: (calls, options) => app.tools.execute(calls, options),
    toolset: (session) => app.tools.toolset({ session }),
    audit: () => app.audit.query({ limit: 100_000 }),
    // The mock platform's memory database is loaded: the requests are its dogu_pending rows.
    pendingStore: async () => JSON.stringify(await app.database.get('dogu_pending' as any, {})),
    async plugin(plugin) {
      const fork = app.plugin(plugin as any)
      await settle()
      if (fork.runtime.error) throw fork.runtime.error
    },
    on: (name, listener) => void app.on(name as any, listener),
    async stop() {
      // The mock bot first: disposed by the app's stop, after the bots service, it throws.
      mock.dispose()
      const engines = [app.get('background')?.engine, typeof app.permissions.engine === 'object' ? app.permissions.engine : undefined]
      await app.stop()
      await Promise.all(engines.map((engine) => engine && ('stop' in engine ? engine.stop() : engine.dispose())))
      await auditLog?.stop()
    },
  }
}

export function createApp(host: HostSpec, config: DoguConfig): Promise<RunApp> {
  return host.name === 'cordis' ? cordisApp(host, config) : koishiApp(host, config)
}
