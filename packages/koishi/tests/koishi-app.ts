import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Memory from '@koishijs/plugin-database-memory'
import { MockBot } from '@koishijs/plugin-mock'
import { App, type ForkScope, type Session } from 'koishi'
import { afterEach, vi } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import * as Dogu from '../src'

const apps: { app: App; mock: ForkScope; engines: { stop(): Promise<void> }[] }[] = []
/** Audit logs the apps made: a plugin a test unloads still writes its last records, awaited before the dirs go. */
const audits: { stop(): Promise<void> }[] = []
const dirs: string[] = []

// Stopped, with their stores written, before the temp dirs go.
afterEach(async () => {
  vi.useRealTimers()
  for (const { app, mock, engines: first } of apps.splice(0).reverse()) {
    // The mock bot first: disposed by the app's stop, after the bots service, it throws.
    mock.dispose()
    const engines = [app.get('background')?.engine, typeof app.permissions.engine === 'object' ? app.permissions.engine : undefined]
    // The log of a reloaded plugin too: its last writes (a task a restart cut off) are awaited before the dir goes.
    const log = app.get('audit')?.log
    if (log) audits.push(log)
    await app.stop()
    // The engine the app started with too (a test may have unloaded or reloaded the plugin):
    // its last writes to the kept requests' file are awaited before the dir goes.
    await Promise.all([...first.map((engine) => engine.stop()), ...engines.map((engine) => engine && ('stop' in engine ? engine.stop() : engine.dispose()))])
  }
  await Promise.all(audits.splice(0).map((log) => log.stop()))
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
})

export interface KoishiAppOptions {
  /** Load the in-memory database (a user table). */
  database?: boolean
  /**
   * The Dogu plugin's config; `false`: Dogu is not loaded. Store paths default to a temp
   * dir; chat approvals and task notices are off unless the config turns them on.
   */
  dogu?: false | Dogu.Config
}

/** A started Koishi app with the mock adapter, optionally a database, and Dogu. */
export async function koishiApp(options: KoishiAppOptions = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'dogu-koishi-'))
  dirs.push(dir)
  const app = new App()
  // An error or warning the test does not declare (guard.expect) fails it: test-support/log-guard.ts.
  const guard = guardLogs(app)
  /** What `internal/error` carried, for a test that checks which error it was. */
  const errors: unknown[] = []
  app.on('internal/error', (error) => { errors.push(error) })
  const entry: (typeof apps)[number] = { app, mock: app.plugin(MockBot, { selfId: '514' }), engines: [] }
  apps.push(entry)
  // Typed against minato's own Context, which Koishi's `plugin()` signature does not accept.
  if (options.database) loadPlugin(app, Memory)
  await app.start()
  let dogu
  if (options.dogu !== false) {
    const config = options.dogu ?? {}
    dogu = app.plugin(Dogu, {
      // The chat parts are tested on their own (chat-approvals.spec.ts, …): here a call that
      // needs approval is denied at once, saying no asker is registered, unless a test asks.
      approvals: { enabled: false },
      notices: { enabled: false },
      ...config,
      permissions: { storePath: join(dir, 'permissions.json'), ...config.permissions },
      background: { storePath: join(dir, 'background.json'), ...config.background },
      audit: { storePath: join(dir, 'audit.jsonl'), ...config.audit },
    })
  }
  await settle(app)
  if (typeof app.permissions.engine === 'object') entry.engines.push(app.permissions.engine)
  const audit = app.get('audit')?.log
  if (audit) audits.push(audit)
  return { app, dir, dogu, errors, guard }
}

/** cordis 3 applies plugins asynchronously: resolves once every pending apply is done. */
export function settle(app: App): Promise<void> {
  return app.lifecycle.flush()
}

/** The session of the next message `userId` sends (in `channelId`, or privately), as a middleware sees it. */
export async function sessionOf(app: App, userId: string, channelId?: string): Promise<Session> {
  let seen: Session | undefined
  const dispose = app.middleware((session, next) => {
    seen = session
    return next()
  }, true)
  await app.mock.client(userId, channelId).receive('hello')
  dispose()
  if (!seen) throw new Error('no message reached the middleware')
  return seen
}

/**
 * Loads a plugin written for Cordis 4's types (the tool packs, the externals) into a Koishi
 * app. At run time they need only `ctx.tools` (and `ctx.effect`); their TypeScript `Context`
 * is cordis 4's, which Koishi's `plugin()` signature does not accept.
 */
export function loadPlugin(app: App, plugin: object, config?: unknown): ForkScope {
  return app.plugin(plugin as Parameters<App['plugin']>[0], config)
}
