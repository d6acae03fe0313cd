import { convertToDialect, type Dialect, type DialectConversion, type JsonSchema, toJsonSchema } from '@dogu/schema'
import type Schema from 'schemastery'

const cache = new WeakMap<Schema, Map<string, JsonSchema>>()
const conversions = new WeakMap<JsonSchema, Map<Dialect, DialectConversion>>()

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

/**
 * The JSON Schema of a tool's arguments for a reader that looks once (the search index):
 * the cached one when some toolset converted it already, else a fresh one that is not kept,
 * so indexing thousands of deferred tools does not hold thousands of schemas no model sees.
 */
export function passingJsonSchemaOf(args: Schema): JsonSchema {
  return cache.get(args)?.get('') ?? toJsonSchema(args)
}

/**
 * A tool's arguments in a provider's dialect, with what that form gives up (`loosened`) and
 * the paths that travel JSON-encoded: converted once per schema, locale and dialect, since
 * the definitions, `toolset.loosened()` and the decoding of every call share it. Frozen.
 */
export function dialectOf(args: Schema, locale: string | undefined, dialect: Dialect): DialectConversion {
  const json = jsonSchemaOf(args, locale)
  let byDialect = conversions.get(json)
  if (!byDialect) conversions.set(json, byDialect = new Map())
  let conversion = byDialect.get(dialect)
  if (!conversion) byDialect.set(dialect, conversion = deepFreeze(convertToDialect(json, dialect)))
  return conversion
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const child of Object.values(value)) deepFreeze(child)
  }
  return value
}
