import type { JsonSchema } from '../json-schema'
import { isPlain, jsonEqual } from '../json-value'
import { mergeObjects } from '../object-merge'
import { splitAnnotations } from '../nullable'

// Keywords a same-type merge understands; a part with any other assertion is left as it is.
const LOWER_BOUNDS = new Set(['minimum', 'exclusiveMinimum', 'minLength', 'minItems'])
const UPPER_BOUNDS = new Set(['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems'])
const SAME_VALUE = new Set(['pattern', 'format', 'multipleOf', 'prefixItems'])
const MERGEABLE_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array'])

/**
 * The same schema with its `allOf` merged away where that keeps its meaning exactly: nested
 * `allOf` lists spliced into one, parts that constrain nothing left out, plain objects merged
 * (`mergeObjects`), and parts of one scalar or array type combined keyword by keyword (the
 * tighter bound, the common enum values). What cannot merge stays an `allOf`.
 */
export function mergeAllOf(schema: JsonSchema): JsonSchema {
  if (!Array.isArray(schema.allOf)) return schema
  const { allOf, $defs, ...rest } = schema
  const [annotations, own] = splitAnnotations(rest)
  const outer: JsonSchema = $defs === undefined ? annotations : { ...annotations, $defs }
  const parts = [...Object.keys(own).length ? [own] : [], ...(allOf as JsonSchema[]).flatMap(splice)]
    .filter((part) => Object.keys(splitAnnotations(part)[1]).length)
  if (!parts.length) return outer
  if (parts.length === 1) return { ...parts[0], ...outer }
  const merged = mergeObjects(parts) ?? mergeSameType(parts)
  return merged ? { ...merged, ...outer } : { ...outer, allOf: parts }
}

// A part that is only an allOf (and annotations) is its parts.
function splice(part: JsonSchema): JsonSchema[] {
  const [, assertions] = splitAnnotations(part)
  const keys = Object.keys(assertions)
  if (keys.length === 1 && Array.isArray(assertions.allOf)) return (assertions.allOf as JsonSchema[]).flatMap(splice)
  return [part]
}

function mergeSameType(parts: JsonSchema[]): JsonSchema | undefined {
  const result: JsonSchema = {}
  for (const part of parts) {
    const [, assertions] = splitAnnotations(part)
    if (typeof assertions.type !== 'string' || !MERGEABLE_TYPES.has(assertions.type)) return
    for (const [key, value] of Object.entries(assertions)) {
      if (!(key in result)) {
        result[key] = value
        continue
      }
      const merged = combine(key, result[key], value)
      if (merged === undefined) return
      result[key] = merged
    }
  }
  if ('const' in result && Array.isArray(result.enum)) {
    if (!result.enum.some((value) => jsonEqual(value, result.const))) return
    delete result.enum
  }
  return result
}

/** Two values of one keyword as one, or `undefined` when they do not combine exactly. */
function combine(key: string, a: unknown, b: unknown): unknown {
  if (jsonEqual(a, b)) return a
  if (key === 'type') {
    const types = new Set([a, b])
    // an integer that is also a number is an integer
    return types.size === 2 && types.has('integer') && types.has('number') ? 'integer' : undefined
  }
  if (LOWER_BOUNDS.has(key)) return Math.max(a as number, b as number)
  if (UPPER_BOUNDS.has(key)) return Math.min(a as number, b as number)
  if (key === 'uniqueItems') return a || b
  if (key === 'enum') {
    const common = (a as unknown[]).filter((value) => (b as unknown[]).some((other) => jsonEqual(value, other)))
    return common.length ? common : undefined
  }
  if (key === 'items' && isPlain(a) && isPlain(b)) {
    if (!Object.keys(splitAnnotations(a)[1]).length) return b
    if (!Object.keys(splitAnnotations(b)[1]).length) return a
    return mergeAllOf({ allOf: [a, b] })
  }
  if (SAME_VALUE.has(key)) return
}
