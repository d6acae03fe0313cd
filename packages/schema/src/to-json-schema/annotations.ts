import type Schema from 'schemastery'
import type { JsonSchema } from '../json-schema'
import { isNullish, jsonCopy, jsonEqual } from '../json-value'

// Defaults that schemastery's builders set on their own (`Schema.object()` defaults to `{}`);
// repeating them would only add noise, so they are left out.
const BUILTIN_DEFAULTS: Record<string, unknown> = {
  object: {},
  dict: {},
  array: [],
  tuple: [],
  bitset: 0,
}

// The locale a bare language means, as Koishi's own locales name them (`en` is `en-US`).
const MAIN_LOCALES: Record<string, string> = {
  en: 'en-US',
  zh: 'zh-CN',
  ja: 'ja-JP',
  fr: 'fr-FR',
  de: 'de-DE',
  ru: 'ru-RU',
}

// When nothing of the asked language is there: the neutral text, then English, then Chinese.
const FALLBACK = ['', 'en', 'en-US', 'zh', 'zh-CN']

/**
 * Picks the text of an i18n description, in this order: the requested locale (`en-GB`); its
 * language (`en`); the language's main locale (`en-US`, `zh-CN`, `ja-JP`, `fr-FR`, `de-DE`,
 * `ru-RU`); any other locale of that language (`en-AU`); then `''`, `en`, `en-US`, `zh`,
 * `zh-CN`; then the first non-empty text. Locale names compare case-insensitively.
 */
export function pickText(text: string | Record<string, string> | undefined, locale?: string): string | undefined {
  if (typeof text === 'string') return text || undefined
  if (!text) return
  const keys = new Map<string, string>()
  for (const key of Object.keys(text)) {
    if (text[key] && !keys.has(key.toLowerCase())) keys.set(key.toLowerCase(), key)
  }
  const find = (name: string) => {
    const key = keys.get(name.toLowerCase())
    return key === undefined ? undefined : text[key]
  }
  if (locale) {
    const language = locale.split('-')[0]!.toLowerCase()
    const main = Object.hasOwn(MAIN_LOCALES, language) ? MAIN_LOCALES[language] : undefined
    for (const name of [locale, language, ...main ? [main] : []]) {
      const found = find(name)
      if (found) return found
    }
    for (const [lower, key] of keys) {
      if (lower.startsWith(`${language}-`)) return text[key]
    }
  }
  for (const name of FALLBACK) {
    const found = find(name)
    if (found) return found
  }
  return Object.values(text).find(Boolean)
}

/** The JSON Schema annotations of a schemastery node: description, default, deprecated. */
export function annotationsOf(schema: Schema, locale?: string): JsonSchema {
  const result: JsonSchema = {}
  const description = pickText(schema.meta.description, locale)
  if (description) result.description = description
  // a default as JSON would carry it; one JSON cannot hold (or an invalid Date, which becomes null) is dropped
  const fallback = jsonCopy(schema.meta.default)
  // `!isNullish` keeps the falsy defaults (0, '', false) that a truthiness check would drop
  if (!isNullish(fallback) && !(schema.type in BUILTIN_DEFAULTS && jsonEqual(fallback, BUILTIN_DEFAULTS[schema.type]))) {
    result.default = fallback
  }
  if (schema.meta.badges?.some(badge => badge.text === 'deprecated')) result.deprecated = true
  return result
}
