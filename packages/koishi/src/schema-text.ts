import type { Schema } from 'koishi'

/**
 * A config schema described in both of the console's locales. Koishi's console shows the
 * user's locale (`zh-CN`, `en-US`) and falls back to the plain description (English).
 */
export function described<S extends Schema<any, any>>(schema: S, en: string, zh: string): S {
  return schema.description(en).i18n({ 'en-US': en, 'zh-CN': zh }) as S
}
