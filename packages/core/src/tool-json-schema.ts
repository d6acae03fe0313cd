import { type JsonSchema, toJsonSchema } from '@dogu/schema'
import type Schema from 'schemastery'

const cache = new WeakMap<Schema, Map<string, JsonSchema>>()

/**
 * The JSON Schema (2020-12) of a tool's arguments, converted once per schema and locale:
 * `defineTool` checks it, every provider dialect and the search index start from it.
 * Deep-frozen, since all of them share it.
 */
export function jsonSchemaOf(args: Schema, locale?: string): JsonSchema {
  let byLocale = cache.get(args)
  if (!byLocale) cache.set(args, byLocale = new Map())
  const key = locale ?? ''
  let json = byLocale.get(key)
  if (!json) byLocale.set(key, json = deepFreeze(toJsonSchema(args, { locale })))
  return json
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const child of Object.values(value)) deepFreeze(child)
  }
  return value
}
