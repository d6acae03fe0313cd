import type Schema from 'schemastery'
import { SchemaError } from '../errors'
import type { JsonSchema } from '../json-schema'
import { isNullish } from '../json-value'
import { childPath } from '../path'
import type { Converter } from './context'
import { withBounds } from './scalars'

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
    const result: JsonSchema = { type: 'object', additionalProperties: ctx.slot(inner!, `${path}.*`) }
    if (!sKey || isAnyString(sKey)) return result
    if (strict) {
      // strict resolution skips keys the key schema refuses, and leaves their values unchecked
      throw new SchemaError('UNSUPPORTED_CONSTRAINT', path,
        'a dict with a key schema inside intersect or transform skips bad keys instead of refusing them; JSON Schema cannot say that')
    }
    result.propertyNames = ctx.node(sKey, `${path}.*`, false)
    return result
  },
}

function isAnyString(schema: Schema) {
  const { meta } = schema
  return schema.type === 'string' && !meta.loose && !meta.pattern && isNullish(meta.min) && isNullish(meta.max)
}
