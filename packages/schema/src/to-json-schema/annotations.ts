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

/**
 * Picks the text of an i18n description: the requested locale, then its language
 * (`zh-CN` → `zh`), then `''`, `en`, `zh`, then the first non-empty one.
 */
export function pickText(text: string | Record<string, string> | undefined, locale?: string): string | undefined {
  if (typeof text === 'string') return text || undefined
  if (!text) return
  const chain = locale ? [locale, locale.split('-')[0]] : []
  for (const key of [...chain, '', 'en', 'zh']) {
    if (Object.hasOwn(text, key) && text[key]) return text[key]
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
