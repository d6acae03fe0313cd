import { SchemaError } from '../errors'
import { isPlain, jsonEqual } from '../json-value'
import type { JsonSchema } from '../json-schema'
import { childPath } from '../path'

/** Rewrites one subschema; `path` is where its values sit (`$.a[*]`). */
export type Visitor = (schema: JsonSchema, path: string) => JsonSchema

/** What to do with a keyword: keep it, drop it (the provider ignores or forbids it), refuse, or rewrite. */
export type KeywordRule = 'keep' | 'drop' | { refuse: string } | ((schema: JsonSchema, path: string) => void)

/** Throws the dialect's refusal, naming the path. */
export function refuse(path: string, message: string): never {
  throw new SchemaError('DIALECT_REFUSED', path, message)
}

/** A subschema as an object: `true` is `{}`, `false` is `{ not: {} }`. */
function asObject(schema: unknown, path: string): JsonSchema {
  if (schema === true) return {}
  if (schema === false) return { not: {} }
  if (!isPlain(schema)) throw new SchemaError('INVALID_SCHEMA', path, `expected a schema, got ${JSON.stringify(schema)}`)
  return schema
}

/** A copy of `schema` with each direct subschema passed through `visit`. */
export function mapChildren(schema: JsonSchema, path: string, visit: Visitor): JsonSchema {
  const result = { ...schema }
  const one = (value: unknown, at: string) => visit(asObject(value, at), at)
  const map = (value: unknown, at: (key: string) => string) => {
    if (!isPlain(value)) return value
    return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, one(child, at(key))]))
  }
  if ('properties' in schema) result.properties = map(schema.properties, key => childPath(path, key))
  if ('$defs' in schema) result.$defs = map(schema.$defs, key => `${path}.$defs.${key}`)
  if ('items' in schema) result.items = one(schema.items, `${path}[*]`)
  if ('additionalProperties' in schema && typeof schema.additionalProperties !== 'boolean') {
    result.additionalProperties = one(schema.additionalProperties, `${path}.*`)
  }
  if ('propertyNames' in schema) result.propertyNames = one(schema.propertyNames, `${path}.*`)
  if ('not' in schema) result.not = one(schema.not, path)
  if (Array.isArray(schema.prefixItems)) result.prefixItems = schema.prefixItems.map((item, index) => one(item, `${path}[${index}]`))
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    if (Array.isArray(schema[key])) result[key] = (schema[key] as unknown[]).map(branch => one(branch, path))
  }
  return result
}

/** Applies a dialect's keyword table to a copy of `schema`; a keyword the table lacks is refused. */
export function applyKeywords(schema: JsonSchema, path: string, rules: Record<string, KeywordRule>, dialect: string): JsonSchema {
  const result = { ...schema }
  for (const key of Object.keys(schema)) {
    const rule = Object.hasOwn(rules, key) ? rules[key] : { refuse: `${dialect} does not support the keyword ${key}` }
    if (rule === 'keep') continue
    if (rule === 'drop') delete result[key]
    else if (typeof rule === 'function') rule(result, path)
    else refuse(path, rule.refuse)
  }
  return result
}

/** The JSON type every value of an enum/const has (with `null` beside it, if listed), if they share one. */
export function inferType(schema: JsonSchema): string | string[] | undefined {
  const values = Array.isArray(schema.enum) ? schema.enum : 'const' in schema ? [schema.const] : []
  const types = new Set(values.filter(value => value !== null).map(value => typeof value))
  const [type] = types
  if (types.size !== 1 || !['string', 'number', 'boolean'].includes(type)) return
  return values.includes(null) ? [type, 'null'] : type
}

/** Why a schema without a type cannot be given one. */
export function untyped(dialect: string, schema: JsonSchema) {
  if (Array.isArray(schema.enum) || 'const' in schema) {
    return `${dialect} needs a type, and these values share none of string, number, boolean: ${JSON.stringify(schema.enum ?? schema.const)}`
  }
  return `${dialect} needs a type here; Schema.any(), never() and loose schemas have none`
}

/** A `format` rule that keeps only the formats a provider knows (others are hints it ignores). */
export function knownFormats(formats: readonly string[]): KeywordRule {
  return (schema) => {
    if (!formats.includes(schema.format as string)) delete schema.format
  }
}

/**
 * A `not` rule for providers without `not`: the only `not` we emit is "not null" beside a
 * type or enum, which the type already says; anything else is refused.
 */
export function notNullOnly(provider: string): KeywordRule {
  return (schema, path) => {
    if (!jsonEqual(schema.not, { type: 'null' }) || !('type' in schema || 'enum' in schema)) {
      refuse(path, `${provider} has no \`not\`; a value that may be anything but null (Schema.any().required()) cannot be expressed`)
    }
    delete schema.not
  }
}

/**
 * Annotations and object-shape constraints no provider's tool parameters read: dropped by
 * every dialect (the runtime still validates each call against the full schema).
 */
export const UNREAD_BY_PROVIDERS: Readonly<Record<string, KeywordRule>> = Object.freeze({
  default: 'drop',
  examples: 'drop',
  deprecated: 'drop',
  readOnly: 'drop',
  writeOnly: 'drop',
  $comment: 'drop',
  uniqueItems: 'drop',
  minProperties: 'drop',
  maxProperties: 'drop',
  propertyNames: 'drop',
  contentEncoding: 'drop',
  contentMediaType: 'drop',
})
