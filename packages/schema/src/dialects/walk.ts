import { SchemaError } from '../errors'
import { isPlain, jsonEqual } from '../json-value'
import type { JsonSchema } from '../json-schema'
import { childPath } from '../path'
import { describeSchema } from './describe'

/** Rewrites one subschema; `path` is where its values sit (`$.a[*]`). */
export type Visitor = (schema: JsonSchema, path: string) => JsonSchema

/**
 * What a dialect does with a keyword:
 * - `keep` it;
 * - `drop` an annotation the provider does not read (nothing is lost: `default`, `format`);
 * - `loosen`: drop an assertion the provider cannot state, and record the rule it said;
 * - `{ block }`: the provider cannot state this schema at all; the dialect decides what then
 *   (OpenAI sends the tool with `strict: false`, Gemini sends the value JSON-encoded);
 * - a function that rewrites the schema in place, and may return a block reason.
 */
export type KeywordRule = 'keep' | 'drop' | 'loosen' | { block: string } | ((schema: JsonSchema) => string | void)

/** The outcome of {@link applyKeywords}. */
export interface KeywordResult {
  schema: JsonSchema
  /** The rules of the assertions dropped, in short English. */
  loosened: string[]
  /** Why the schema cannot be stated, when it cannot. */
  blocked?: string
}

/** Throws a refusal that no dialect can avoid (an unknown dialect, parameters that take no object), naming the path. */
export function refuse(path: string, message: string): never {
  throw new SchemaError('DIALECT_REFUSED', path, message)
}

/** A subschema as an object: `true` is `{}`, `false` is `{ not: {} }`. */
export function asObject(schema: unknown, path: string): JsonSchema {
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
    const mapped: JsonSchema = {}
    for (const [key, child] of Object.entries(value)) {
      // defineProperty, so that a property named __proto__ stays a property
      Object.defineProperty(mapped, key, { value: one(child, at(key)), enumerable: true, writable: true, configurable: true })
    }
    return mapped
  }
  if ('properties' in schema) result.properties = map(schema.properties, key => childPath(path, key))
  if ('patternProperties' in schema) result.patternProperties = map(schema.patternProperties, () => `${path}.*`)
  if ('$defs' in schema) result.$defs = map(schema.$defs, key => `${path}.$defs.${key}`)
  if ('items' in schema && typeof schema.items !== 'boolean') result.items = one(schema.items, `${path}[*]`)
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

/** Applies a dialect's keyword table to a copy of `schema`. A keyword the table lacks is an annotation to JSON Schema, and is dropped. */
export function applyKeywords(schema: JsonSchema, rules: Readonly<Record<string, KeywordRule>>): KeywordResult {
  const result: KeywordResult = { schema: { ...schema }, loosened: [] }
  for (const key of Object.keys(schema)) {
    const rule = Object.hasOwn(rules, key) ? rules[key] : 'drop'
    if (rule === 'keep') continue
    if (rule === 'drop') {
      delete result.schema[key]
    } else if (rule === 'loosen') {
      result.loosened.push(ruleOf(key, schema[key]))
      delete result.schema[key]
    } else if (typeof rule === 'function') {
      const blocked = rule(result.schema)
      if (blocked) result.blocked ??= blocked
    } else {
      result.blocked ??= rule.block
    }
  }
  return result
}

// How a dropped assertion reads in a loosening.
const RULE_TEXT: Record<string, (value: any) => string> = {
  minLength: (n) => `at least ${n} ${n === 1 ? 'character' : 'characters'}`,
  maxLength: (n) => `at most ${n} ${n === 1 ? 'character' : 'characters'}`,
  pattern: (p) => `matches /${p}/`,
  multipleOf: (m) => `a multiple of ${m}`,
  minimum: (n) => `at least ${n}`,
  maximum: (n) => `at most ${n}`,
  exclusiveMinimum: (n) => `greater than ${n}`,
  exclusiveMaximum: (n) => `less than ${n}`,
  minItems: (n) => `at least ${n} ${n === 1 ? 'item' : 'items'}`,
  maxItems: (n) => `at most ${n} ${n === 1 ? 'item' : 'items'}`,
  uniqueItems: () => 'items are unique',
  minProperties: (n) => `at least ${n} ${n === 1 ? 'key' : 'keys'}`,
  maxProperties: (n) => `at most ${n} ${n === 1 ? 'key' : 'keys'}`,
  propertyNames: (schema) => `keys are ${describeSchema(schema)}`,
  enum: (values) => values.length === 1 ? `exactly ${JSON.stringify(values[0])}` : describeSchema({ enum: values }),
  const: (value) => `exactly ${JSON.stringify(value)}`,
}

/** The rule an assertion states, in short English. */
export function ruleOf(key: string, value: unknown): string {
  if (Object.hasOwn(RULE_TEXT, key)) return RULE_TEXT[key]!(value)
  const text = JSON.stringify(value) ?? String(value)
  return `${key}: ${text.length > 80 ? `${text.slice(0, 77)}...` : text}`
}

/** The JSON type every value of an enum/const has (with `null` beside it, if listed), if they share one. */
export function inferType(schema: JsonSchema): string | string[] | undefined {
  const values = Array.isArray(schema.enum) ? schema.enum : 'const' in schema ? [schema.const] : []
  const types = new Set(values.filter(value => value !== null).map(value => typeof value))
  const [type] = types
  if (types.size !== 1 || !['string', 'number', 'boolean'].includes(type!)) return
  return values.includes(null) ? [type!, 'null'] : type
}

/** A `format` rule that keeps only the formats a provider knows (others are hints it ignores). */
export function knownFormats(formats: readonly string[]): KeywordRule {
  return (schema) => {
    if (!formats.includes(schema.format as string)) delete schema.format
  }
}

/**
 * A `not` rule for providers without `not`: "not null" beside a type or an enum is what the
 * type already says, and goes; any other `not` blocks.
 */
export const notNullOnly: KeywordRule = (schema) => {
  if (jsonEqual(schema.not, { type: 'null' }) && ('type' in schema || 'enum' in schema || 'const' in schema)) {
    delete schema.not
    return
  }
  return describeSchema({ not: schema.not })
}

/**
 * What no provider's tool parameters read, dropped by every dialect: annotations (nothing is
 * lost) and rare assertions (loosened; the runtime still checks them on every call).
 */
export const UNREAD_BY_PROVIDERS: Readonly<Record<string, KeywordRule>> = Object.freeze({
  default: 'drop',
  examples: 'drop',
  deprecated: 'drop',
  readOnly: 'drop',
  writeOnly: 'drop',
  $comment: 'drop',
  contentEncoding: 'drop',
  contentMediaType: 'drop',
  contentSchema: 'drop',
  uniqueItems: 'loosen',
  minProperties: 'loosen',
  maxProperties: 'loosen',
  propertyNames: 'loosen',
  contains: 'loosen',
  minContains: 'loosen',
  maxContains: 'loosen',
  dependentRequired: 'loosen',
  dependentSchemas: 'loosen',
  if: 'loosen',
  then: 'loosen',
  else: 'loosen',
  unevaluatedItems: 'loosen',
  unevaluatedProperties: 'loosen',
})
