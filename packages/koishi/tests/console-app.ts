import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { defineTool } from '@dogu/core'
import type { Page } from 'playwright-core'
import type Console from '@koishijs/plugin-console'
import type Auth from '@koishijs/plugin-auth'
import type Server from '@koishijs/plugin-server'
import { type App, type Context, Schema } from 'koishi'
import { AuditService } from '../src'
import { auditCommand } from '../src/audit-command'
import { consolePage, type ConsolePageConfig } from '../src/console-page'
import { type ChatAppOptions, chatApp } from './chat-harness'
import { freePort } from '../../../test-support/free-port'

// Required, as a Koishi app loads them: their ESM builds import Koishi's ESM entry, which
// does not load in Node (see vitest.config.ts).
const require = createRequire(import.meta.url)
const unwrap = <T>(module: T): T => (module as { default?: T }).default ?? module
export const ServerPlugin = unwrap(require('@koishijs/plugin-server') as typeof Server)
// Typed for `app.plugin()`: its `inject: { optional }` does not match cordis 3's declared shape.
export const ConsolePlugin = unwrap(require('@koishijs/plugin-console') as typeof Console) as unknown as Parameters<App['plugin']>[0]
/** @koishijs/plugin-auth: the console's login; it needs a database. */
export const AuthPlugin = unwrap(require('@koishijs/plugin-auth') as typeof Auth)

/** The password of the console's `admin` (authority 5) when `consoleApp` loads plugin-auth. */
export const ADMIN_PASSWORD = 'dogu-console-test'

/** The page as `koishi-console build` wrote it. */
export const DIST = resolve(__dirname, '../dist')

/**
 * A chat app (mock adapter, users, chat approvals) with Koishi's console on a free port
 * and Dogu's page in it, plus two tools: `echo` (read) and `deploy` (exec: asks first).
 * `auth`: with @koishijs/plugin-auth and its `admin` (`ADMIN_PASSWORD`); `audit`: with
 * `ctx.audit` (its file in the app's temp folder) and `dogu.audit`.
 *
 * Koishi's console serves a plugin's files only from its own folder or from node_modules,
 * where an installed koishi-plugin-dogu lives: the page is registered from a temp
 * `node_modules/koishi-plugin-dogu/dist`, a link to this package's dist.
 */
export async function consoleApp(options: ChatAppOptions & { page?: ConsolePageConfig; auth?: true; audit?: true } = {}) {
  if (!existsSync(join(DIST, 'index.js'))) {
    throw new Error(`the console page is not built (${DIST} has no index.js): run \`node scripts/build.mjs koishi-plugin-dogu\``)
  }
  const t = await chatApp(options)
  const { app } = t
  const dir = await mkdtemp(join(tmpdir(), 'dogu-koishi-console-'))
  const installed = join(dir, 'node_modules/koishi-plugin-dogu')
  await mkdir(installed, { recursive: true })
  await symlink(DIST, join(installed, 'dist'), 'dir')
  // Koishi's server does not listen on port 0: a free port is found first.
  const server = app.plugin(ServerPlugin, { host: '127.0.0.1', port: await freePort() })
  const console = app.plugin(ConsolePlugin, { devMode: false, open: false })
  const extras = [
    ...options.auth ? [app.plugin(AuthPlugin, { admin: { enabled: true, username: 'admin', password: ADMIN_PASSWORD } })] : [],
    ...options.audit ? [
      app.plugin(AuditService, { storePath: join(dir, 'audit.jsonl') }),
      app.plugin({ name: 'dogu-audit-command', inject: ['audit'], apply: auditCommand }, {}),
    ] : [],
  ]
  const page = app.plugin({
    name: 'dogu-console',
    inject: ['tools', 'console'],
    apply: (ctx: Context, config: ConsolePageConfig) => consolePage(ctx, config, join(installed, 'dist')),
  }, options.page ?? {})
  app.plugin({
    name: 'console-test-tools',
    inject: ['tools'],
    apply(ctx: Context) {
      ctx.tools.define(defineTool({
        name: 'echo',
        description: 'Repeat a text',
        args: Schema.object({ text: Schema.string().required().description('What to repeat') }),
        traits: { effect: 'read' },
        run: (args: { text: string }, context) => `${args.text} (as authority ${context.session.authority})`,
      }))
      ctx.tools.define(defineTool({
        name: 'deploy',
        description: 'Deploy the current build',
        args: Schema.object({ env: Schema.string().required() }),
        traits: { effect: 'exec' },
        run: (args: { env: string }) => `deployed ${args.env}`,
      }))
    },
  })
  await t.settle()
  const http = app.server._http
  if (!http.listening) {
    await new Promise<void>((done, fail) => {
      const timer = setTimeout(() => fail(new Error('Koishi\'s server did not listen within 10 s')), 10_000)
      http.once('listening', () => {
        clearTimeout(timer)
        done()
      })
    })
  }
  const port = (http.address() as { port: number }).port
  return {
    ...t,
    /** The console's address. */
    base: `http://127.0.0.1:${port}`,
    async dispose() {
      // Browsers keep connections alive: drop them, or the server's close waits for them.
      http.closeAllConnections()
      // Connected pages first: a page still connected when its entry goes is sent the new
      // entry list, and the console is gone by then.
      await Promise.all(Object.values(app.console.clients).map((client) => closeSocket(client.socket as unknown as WebSocket)))
      // The page, the console, the server, each while what it uses is still there.
      for (const fork of [page, ...extras.reverse(), console, server]) {
        fork.dispose()
        await t.settle()
      }
      await t.dispose()
      await rm(dir, { recursive: true, force: true })
    },
  }
}

/**
 * Logs in to the console as its `admin` on plugin-auth's login page (its words are Chinese
 * whatever the locale), and waits until it is done. The login stays in the browser's storage.
 */
export async function logIn(page: Page, base: string) {
  await page.goto(`${base}/login`)
  await page.fill('input[placeholder=用户名]', 'admin')
  await page.fill('input[placeholder=密码]', ADMIN_PASSWORD)
  await page.locator('.login-form button', { hasText: '登录' }).click()
  await page.waitForURL((url) => url.pathname !== '/login')
}

/** Ends a console client's socket and resolves once the console has let it go. */
function closeSocket(socket: WebSocket): Promise<void> {
  return new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error('a console socket did not close within 5 s')), 5000)
    socket.addEventListener('close', () => {
      clearTimeout(timer)
      done()
    }, { once: true })
    socket.close()
  })
}

