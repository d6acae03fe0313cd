import { createRequire } from 'node:module'

// Koishi 4 and its plugins are installed in packages/koishi/node_modules only: loaded from
// there, through require, as Koishi apps load them (vitest.config.ts says why).
const requireKoishi = createRequire(new URL('../../packages/koishi/package.json', import.meta.url))

type KoishiModule = typeof import('../../packages/koishi/node_modules/koishi')
type MockModule = typeof import('../../packages/koishi/node_modules/@koishijs/plugin-mock')
const koishi: KoishiModule = requireKoishi('koishi')
const mock: MockModule = requireKoishi('@koishijs/plugin-mock')

export const App: KoishiModule['App'] = koishi.App
export const h: KoishiModule['h'] = koishi.h
export const MockBot: MockModule['MockBot'] = mock.MockBot
export const Memory = requireKoishi('@koishijs/plugin-database-memory')

export type KoishiApp = InstanceType<KoishiModule['App']>
