import type { JsonSchema } from './json-schema'
import { isPlain } from './json-value'

// Internal helpers shared by the converter and the dialects: how `null` is let in or out of
// a JSON Schema without changing what it says about every other value.

/** Keywords that describe a value without constraining it. */
export const ANNOTATIONS: ReadonlySet<string> = new Set([
  'title', 'description', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly', '$comment',
])

const NULL: JsonSchema = { type: 'null' }

export function isNever(schema: JsonSchema) {
  const keys = Object.keys(schema)
  return keys.length === 1 && isPlain(schema.not) && !Object.keys(schema.not).length
}

/** Splits a schema into its annotations and its assertions. */
export function splitAnnotations(schema: JsonSchema): [annotations: JsonSchema, assertions: JsonSchema] {
  const annotations: JsonSchema = {}
  const assertions: JsonSchema = {}
  for (const [key, value] of Object.entries(schema)) {
    (ANNOTATIONS.has(key) ? annotations : assertions)[key] = value
  }
  return [annotations, assertions]
}

/** Whether `null` may pass this schema. Conservative: a `$ref` is assumed not to. */
export function mayAcceptNull(schema: JsonSchema): boolean {
  if (schema.type !== undefined) return schema.type === 'null' || (Array.isArray(schema.type) && schema.type.includes('null'))
  if (Array.isArray(schema.enum)) return schema.enum.includes(null)
  if ('const' in schema) return schema.const === null
  if (schema.not !== undefined || schema.$ref !== undefined) return false
  if (Array.isArray(schema.anyOf) && !schema.anyOf.some(mayAcceptNull)) return false
  if (Array.isArray(schema.oneOf) && !schema.oneOf.some(mayAcceptNull)) return false
  if (Array.isArray(schema.allOf) && !schema.allOf.every(mayAcceptNull)) return false
  return true
}

/** The same schema, also accepting `null`. */
export function addNull(schema: JsonSchema): JsonSchema {
  if (mayAcceptNull(schema)) return schema
  const [annotations, assertions] = splitAnnotations(schema)
  if (isNever(assertions)) return { ...NULL, ...annotations }
  const keys = Object.keys(assertions)
  const combined = keys.some(key => ['anyOf', 'oneOf', 'allOf', 'not', '$ref'].includes(key))
  if (!combined && assertions.type !== undefined) {
    const result: JsonSchema = { ...schema, type: [...toArray(assertions.type), 'null'] }
    if (Array.isArray(result.enum)) result.enum = [...result.enum, null]
    if ('const' in result) {
      result.enum = [result.const, null]
      delete result.const
    }
    return result
  }
  if (!combined && Array.isArray(assertions.enum)) return { ...schema, enum: [...assertions.enum, null] }
  if (!combined && 'const' in assertions) {
    const { const: value, ...rest } = schema
    return { ...rest, enum: [value, null] }
  }
  if (keys.length === 1 && Array.isArray(assertions.anyOf)) {
    return { ...schema, anyOf: [...assertions.anyOf, NULL] }
  }
  return { anyOf: [assertions, NULL], ...annotations }
}

/** The same schema, no longer accepting `null`; `undefined` when `null` is all it accepts. */
export function removeNull(schema: JsonSchema): JsonSchema | undefined {
  if (!mayAcceptNull(schema)) return schema
  const [annotations, assertions] = splitAnnotations(schema)
  if (schema.type !== undefined) {
    const types = toArray(schema.type).filter(type => type !== 'null')
    if (!types.length) return
    const result: JsonSchema = { ...schema, type: types.length === 1 ? types[0] : types }
    if (Array.isArray(result.enum)) result.enum = result.enum.filter(value => value !== null)
    return result
  }
  if (Array.isArray(schema.enum)) {
    const values = schema.enum.filter(value => value !== null)
    return values.length ? { ...schema, enum: values } : undefined
  }
  if ('const' in schema) return
  if (Object.keys(assertions).length === 1 && Array.isArray(assertions.anyOf)) {
    const branches = (assertions.anyOf as JsonSchema[]).filter(branch => !isNullOnly(branch))
    if (!branches.length) return
    if (branches.length === 1) {
      // unwrap the single remaining branch; the outer annotations describe it best
      return removeNull({ ...branches[0], ...annotations })
    }
    return { ...schema, anyOf: branches.map(branch => removeNull(branch) ?? branch) }
  }
  // an open schema (`{}`): say "anything but null"
  return { ...schema, not: NULL }
}

function isNullOnly(schema: JsonSchema) {
  const [, assertions] = splitAnnotations(schema)
  return assertions.type === 'null' && Object.keys(assertions).length === 1
}

export function toArray<T>(value: T | T[]): T[] {
  return Array.isArray(value) ? value : [value]
}
