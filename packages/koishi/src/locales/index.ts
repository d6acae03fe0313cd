import type { Context } from 'koishi'
import { enUS } from './en-US'
import { type Locale, zhCN } from './zh-CN'

export type { Locale }

/** The plugin's messages, by Koishi locale. */
export const LOCALES: ReadonlyMap<string, Locale> = new Map([
  ['zh-CN', zhCN],
  ['en-US', enUS],
])

/**
 * Defines one section of every locale under `prefix` (`dogu.approvals`, `commands`); the
 * definitions go away with `ctx`'s plugin. Each part of the plugin defines only its own
 * section, so unloading one part never removes another's messages.
 */
export function defineLocales(ctx: Context, prefix: string, section: (locale: Locale) => object): void {
  for (const [locale, messages] of LOCALES) ctx.i18n.define(locale, prefix, section(messages) as any)
}

/**
 * Config descriptions for a schema's `.i18n()`, from each locale's `config` section; the
 * English ones are also the plain descriptions, for a console in any other language.
 */
export function configDescriptions(section: (config: Locale['config']) => object): Record<string, object> {
  const entries = [...LOCALES].map(([locale, messages]) => [locale, section(messages.config)] as const)
  return Object.fromEntries([['', section(enUS.config)], ...entries])
}
