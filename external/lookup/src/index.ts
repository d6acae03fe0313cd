import { defineTool, type Tool } from '@dogu/core'
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { type Capital, capitals } from './capitals'
import { findCapitals } from './find-capitals'

export * from './capitals'
export * from './find-capitals'

/** What this plugin needs of its host: `ctx.tools.define`, as `@dogu/cordis` provides it. */
export interface ToolHost {
  define(tool: Tool): () => void
}

export const name = 'lookup'
export const inject = ['tools']

export interface Config {
  /** Most rows one lookup returns. */
  limit: number
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  limit: Schema.natural().min(1).max(50).default(5).description('Most rows one lookup returns.'),
})

/** Defines the read-only `lookup` tool: countries and capitals, in English and Chinese. */
export function apply(ctx: Context & { tools: ToolHost }, config: Config) {
  // Declared before defineTool, so `run` gets typed arguments (see docs/getting-started.md).
  const args = Schema.object({
    q: Schema.string().min(1).max(100).required().description('A country, a capital or an ISO code, in English or Chinese'),
    limit: Schema.natural().min(1).max(config.limit).default(config.limit).description('Most rows to return'),
  })
  ctx.tools.define(defineTool({
    name: 'lookup',
    description: 'Look up a country and its capital in a small built-in table. Accepts a country name, a capital or a two-letter ISO code, in English or Chinese (e.g. "France", "巴黎", "JP").',
    args,
    traits: { effect: 'read', parallel: true, timeout: 5_000 },
    run: ({ q, limit }) => {
      const rows = findCapitals(capitals, q, limit)
      if (!rows.length) {
        return { text: `No country or capital matches "${q}". Try an English or Chinese name, or a two-letter code such as "FR".`, data: [] }
      }
      return { text: rows.map(describe).join('\n'), data: rows }
    },
  }))
}

function describe(row: Capital): string {
  return `${row.country.en} (${row.country.zh}, ${row.code}): capital ${row.capital.en} (${row.capital.zh})`
}
