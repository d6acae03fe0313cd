import type Schema from 'schemastery'
import { SchemaError } from '../errors'
import type { JsonSchema } from '../json-schema'
import { isNullish } from '../json-value'
import { childPath } from '../path'
import type { Converter } from './context'
import { toPattern, withBounds } from './scalars'

export const structureConverters: Record<string, Converter> = {
  array: ({ inner, meta }, ctx, { path }) => {
    const result: JsonSchema = { type: 'array', items: ctx.slot(inner!, `${path}[*]`) }
    // schemastery skips the lower bound when the items carry a default of their own
    return withBounds(result, meta, 'minItems', 'maxItems', !isNullish(inner!.meta.default))
  },

  // extra elements are kept (or dropped in strict mode), never refused; missing ones are nullish
  tuple: ({ list }, ctx, { path }) => {
    const result: JsonSchema = { type: 'array' }
    if (!list!.length) return result
    result.prefixItems = list!.map((item, index) => ctx.slot(item, `${path}[${index}]`))
    const minItems = list!.findLastIndex(item => !ctx.acceptsNull(item)) + 1
    if (minItems) result.minItems = minItems
    return result
  },

  // unknown keys are kept (or dropped in strict mode), never refused: no additionalProperties
  object: ({ dict }, ctx, { path }) => {
    const entries = Object.entries(dict!)
    const result: JsonSchema = {
      type: 'object',
      // fromEntries defines own keys, so a property named __proto__ stays a property
      properties: Object.fromEntries(entries.map(([key, value]) => [key, ctx.slot(value, childPath(path, key))])),
    }
    const required = entries.filter(([, value]) => !ctx.acceptsNull(value)).map(([key]) => key)
    if (required.length) result.required = required
    return result
  },

  dict: ({ inner, sKey }, ctx, { path, strict }) => {
    const values = ctx.slot(inner!, `${path}.*`)
    if (!sKey || isAnyString(sKey)) return { type: 'object', additionalProperties: values }
    if (!strict) return { type: 'object', additionalProperties: values, propertyNames: ctx.node(sKey, `${path}.*`, false) }
    // strict resolution (inside intersect or transform) skips the keys its key schema
    // refuses and checks the others: patternProperties for a pattern, properties for listed keys
    const pattern = keyPattern(sKey, path)
    if (pattern !== undefined) return { type: 'object', patternProperties: { [pattern]: values } }
    const keys = listedKeys(sKey)
    if (keys) return { type: 'object', properties: Object.fromEntries(keys.map(key => [key, structuredClone(values)])) }
    throw new SchemaError('UNSUPPORTED_CONSTRAINT', path,
      'a dict inside intersect or transform skips the keys its key schema refuses; JSON Schema can say that only for a key pattern or a list of keys')
  },
}

/** The pattern of a key schema that is a plain string pattern, with no length bounds. */
function keyPattern(schema: Schema, path: string): string | undefined {
  const { meta } = schema
  if (schema.type !== 'string' || meta.loose || !meta.pattern || !isNullish(meta.min) || !isNullish(meta.max)) return
  return toPattern(meta.pattern, path)
}

/** The keys a key schema lists: a string constant, or a union of them. */
function listedKeys(schema: Schema): string[] | undefined {
  if (schema.meta.loose) return
  if (schema.type === 'const') return typeof schema.value === 'string' ? [schema.value] : undefined
  if (schema.type !== 'union') return
  const keys = schema.list!.map(listedKeys)
  return keys.every(Boolean) ? [...new Set(keys.flat() as string[])] : undefined
}

function isAnyString(schema: Schema) {
  const { meta } = schema
  return schema.type === 'string' && !meta.loose && !meta.pattern && isNullish(meta.min) && isNullish(meta.max)
}
