import { createRequire } from 'node:module'

// Koishi 4 and its plugins are installed in packages/koishi/node_modules only: loaded from
// there, through require, as Koishi apps load them (vitest.config.ts says why).
const requireKoishi = createRequire(new URL('../../packages/koishi/package.json', import.meta.url))

export const { App, h } = requireKoishi('koishi') as typeof import('../../packages/koishi/node_modules/koishi')
export const { MockBot } = requireKoishi('@koishijs/plugin-mock') as typeof import('../../packages/koishi/node_modules/@koishijs/plugin-mock')
export const Memory = requireKoishi('@koishijs/plugin-database-memory')

export type KoishiApp = InstanceType<typeof App>
