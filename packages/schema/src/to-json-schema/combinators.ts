import type Schema from 'schemastery'
import type { JsonSchema } from '../json-schema'
import { isNullish, jsonEqual } from '../json-value'
import { mergeObjects } from '../object-merge'
import type { Converter } from './context'
import { restoreKeyKeywords } from './key-keywords'
import { NEVER, scalarConverters, typeOfValue } from './scalars'

// Prototype names a JSON value can have; `Schema.is` with any other class matches no JSON value.
const JSON_PROTOTYPES = ['Object', 'Array', 'String', 'Number', 'Boolean']

export const combinatorConverters: Record<string, Converter> = {
  // the first branch that accepts wins; for accept/reject that is anyOf
  union: ({ list }, ctx, site) => {
    // `Schema.date()` is `union([is(Date), transform(string)])`: a JSON value is never a Date
    const branches = list!.filter(branch => !matchesNoJson(branch))
    const parts: JsonSchema[] = []
    const values: unknown[] = []
    let enumIndex = -1
    for (const branch of branches) {
      if (branch.type !== 'const' || branch.meta.loose) {
        parts.push(ctx.node(branch, site.path, site.strict))
      } else if (!isNullish(branch.value)) {
        // constant branches gather into one enum, placed where the first one stood
        if (enumIndex < 0) enumIndex = parts.push(NEVER) - 1
        const { value } = branch
        if (!values.some(known => jsonEqual(known, value))) values.push(scalarConverters.const(branch, ctx, site).const)
      }
    }
    if (enumIndex >= 0) parts[enumIndex] = enumOf(values)
    if (!parts.length) return NEVER
    return parts.length === 1 ? parts[0] : { anyOf: parts }
  },

  // every part sees the same value and must accept it: allOf, merged when the parts are plain objects
  intersect: ({ list }, ctx, { path }) => {
    if (!list!.length) return {}
    const parts = list!.map(part => ctx.node(part, path, true))
    if (parts.length === 1) return restoreKeyKeywords(parts[0])
    const merged = mergeObjects(parts)
    return merged ? restoreKeyKeywords(merged) : { allOf: parts }
  },

  // its input side: what the inner schema accepts before the callback runs
  transform: ({ inner }, ctx, { path }) => ctx.node(inner!, path, true),
}

function enumOf(values: unknown[]): JsonSchema {
  const types = new Set(values.map(typeOfValue))
  // whole numbers beside fractions are all numbers; `integer` tells a model more (Gemini keeps only the type)
  if (types.has('number')) types.delete('integer')
  const type = types.size === 1 ? [...types][0] : undefined
  const result: JsonSchema = type ? { type } : {}
  if (values.length === 1) result.const = values[0]
  else result.enum = values
  return result
}

function matchesNoJson(schema: Schema) {
  if (schema.type !== 'is' || schema.meta.loose) return false
  const { constructor } = schema
  if (typeof constructor === 'function') return constructor !== Object && constructor !== Array
  return !JSON_PROTOTYPES.includes(constructor!)
}
