// What the durable-permissions specs share: a real minato database (Koishi's memory database
// or SQLite) for the pending table. Koishi 4 and its drivers are installed in
// packages/koishi/node_modules only, and are loaded from there through require, as Koishi
// apps load them (vitest.config.ts says why).
import { createRequire } from 'node:module'
import type { MinatoDatabase } from '../src/database/minato-database'

const requireKoishi = createRequire(new URL('../../koishi/package.json', import.meta.url))

type KoishiModule = typeof import('../../koishi/node_modules/koishi')

/** A Koishi app with one database plugin; `database` is its `ctx.database`. Stop it after the test. */
export async function koishiDatabase(kind: 'memory' | 'sqlite', path?: string): Promise<{ database: MinatoDatabase; stop: () => Promise<void> }> {
  const { App } = requireKoishi('koishi') as KoishiModule
  const app = new App()
  const plugin = kind === 'memory' ? requireKoishi('@koishijs/plugin-database-memory') : requireKoishi('@minatojs/driver-sqlite')
  app.plugin(plugin.default ?? plugin, kind === 'sqlite' ? { path } : {})
  await app.start()
  for (let i = 0; i < 500 && !app.get('database'); i++) await new Promise((resolve) => setTimeout(resolve, 20))
  if (!app.get('database')) throw new Error(`the ${kind} database did not start within 10 s`)
  return { database: app.get('database') as unknown as MinatoDatabase, stop: () => app.stop() }
}
