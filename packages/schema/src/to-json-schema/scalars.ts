import type Schema from 'schemastery'
import { SchemaError } from '../errors'
import type { JsonSchema } from '../json-schema'
import { isNullish, jsonCopy } from '../json-value'
import { multipleCheck } from '../multiple-check'
import type { Converter } from './context'

export const NEVER: JsonSchema = { not: {} }

// schemastery roles that name a string format JSON Schema knows
const ROLE_FORMATS: Record<string, string> = {
  datetime: 'date-time',
  date: 'date',
  time: 'time',
  regexp: 'regex',
}

// Flags that do not change what `RegExp.prototype.test` accepts from index 0
// (`u` included: ajv and most validators compile patterns with it).
const NEUTRAL_FLAGS = /^[gdu]*$/

/** The JSON type of a primitive constant, when it has a single one; `integer` for a whole number. */
export function typeOfValue(value: unknown): string | undefined {
  if (typeof value === 'string' || typeof value === 'boolean') return typeof value
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
}

export const scalarConverters: Record<string, Converter> = {
  any: () => ({}),
  never: () => NEVER,
  boolean: () => ({ type: 'boolean' }),

  const: ({ value }, _, { path }) => {
    // a nullish constant matches no non-null value; null itself is decided by the slot
    if (isNullish(value)) return NEVER
    const type = typeOfValue(value)
    return type ? { type, const: value } : { const: toJsonConstant(value, path) }
  },

  string: ({ meta }, _, { path }) => {
    const result: JsonSchema = { type: 'string' }
    const format = meta.role && Object.hasOwn(ROLE_FORMATS, meta.role) ? ROLE_FORMATS[meta.role] : undefined
    if (format) result.format = format
    if (meta.pattern) result.pattern = toPattern(meta.pattern, path)
    return withBounds(result, meta, 'minLength', 'maxLength')
  },

  number: ({ meta }, _, { path }) => {
    const result: JsonSchema = { type: 'number' }
    if (typeof meta.min === 'number' && meta.min > -Infinity) result.minimum = meta.min
    if (typeof meta.max === 'number' && meta.max < Infinity) result.maximum = meta.max
    // schemastery counts steps from `min` (or 0); multipleOf counts from 0
    const step = Math.abs(meta.step ?? 0)
    if (!step) return result
    if (!multipleCheck(0, step)(meta.min ?? 0)) {
      throw new SchemaError('UNSUPPORTED_CONSTRAINT', path,
        `step ${step} counted from min ${meta.min} allows values that are not multiples of ${step}; multipleOf cannot say that`)
    }
    if (Number.isInteger(step)) {
      result.type = 'integer'
      if (step !== 1) result.multipleOf = step
    } else {
      result.multipleOf = step
    }
    return result
  },

  // schemastery takes the bits as a number, or as an array of names (unknown names are ignored)
  bitset: ({ bits }) => {
    const names = Object.keys(bits ?? {})
    return {
      anyOf: [
        { type: 'number' },
        { type: 'array', items: { type: 'string', ...names.length ? { examples: names } : {} } },
      ],
    }
  },

  function: (_, __, { path }) => {
    throw new SchemaError('UNSUPPORTED_TYPE', path, 'Schema.function() accepts functions, which JSON cannot carry')
  },

  is: (schema, _, { path }) => {
    throw new SchemaError('UNSUPPORTED_TYPE', path, `Schema.is(${constructorName(schema)}) checks a class, which JSON Schema cannot express`)
  },
}

function constructorName(schema: Schema) {
  const { constructor } = schema
  return typeof constructor === 'function' ? constructor.name : String(constructor)
}

/** Sets `minimum`-style length bounds from schemastery's `min`/`max` (compared as `<`/`>`). */
export function withBounds(result: JsonSchema, meta: Schemastery.Meta, minKey: string, maxKey: string, skipMin = false): JsonSchema {
  if (!skipMin && typeof meta.min === 'number' && meta.min > 0) result[minKey] = Math.ceil(meta.min)
  if (typeof meta.max === 'number' && meta.max < Infinity) {
    if (meta.max < 0) return NEVER
    result[maxKey] = Math.floor(meta.max)
  }
  return result
}

/** A schemastery pattern as a JSON Schema `pattern`; flags other than g, d, u are refused. */
export function toPattern(pattern: { source: string; flags?: string }, path: string) {
  const flags = pattern.flags ?? ''
  if (!NEUTRAL_FLAGS.test(flags)) {
    throw new SchemaError('UNSUPPORTED_CONSTRAINT', path,
      `pattern /${pattern.source}/${flags} uses flags that JSON Schema patterns cannot carry (only g, d, u); spell them out, e.g. [A-Za-z] for i`)
  }
  try {
    // eslint-disable-next-line no-new
    new RegExp(pattern.source, 'u')
  } catch {
    throw new SchemaError('UNSUPPORTED_CONSTRAINT', path,
      `pattern /${pattern.source}/ is not valid with the u flag that JSON Schema validators use`)
  }
  return pattern.source
}

function toJsonConstant(value: unknown, path: string) {
  const copy = jsonCopy(value)
  if (copy === undefined) throw new SchemaError('UNSUPPORTED_CONSTRAINT', path, 'Schema.const() holds a value that JSON cannot carry')
  return copy
}
