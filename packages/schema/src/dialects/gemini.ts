import type { JsonSchema } from '../json-schema'
import { isPlain } from '../json-value'
import { removeNull, toArray } from '../nullable'
import { childPath } from '../path'
import { prepare } from './prepare'
import { applyKeywords, inferType, type KeywordRule, knownFormats, UNREAD_BY_PROVIDERS, notNullOnly, mapChildren, refuse, untyped } from './walk'

// The string formats Gemini accepts.
const FORMATS = ['date-time', 'date', 'time']

/**
 * Gemini's function-declaration `parameters`: an OpenAPI 3.0 subset. Constraints it lacks
 * are dropped (the runtime still validates each call); shapes it cannot state are refused.
 */
const RULES: Record<string, KeywordRule> = {
  ...UNREAD_BY_PROVIDERS,
  type: 'keep',
  title: 'keep',
  description: 'keep',
  enum: 'keep',
  const: 'keep',
  nullable: 'keep',
  properties: 'keep',
  required: 'keep',
  items: 'keep',
  anyOf: 'keep',
  minimum: 'keep',
  maximum: 'keep',
  minItems: 'keep',
  maxItems: 'keep',
  pattern: 'drop',
  minLength: 'drop',
  maxLength: 'drop',
  multipleOf: 'drop',
  exclusiveMinimum: 'drop',
  exclusiveMaximum: 'drop',
  format: knownFormats(FORMATS),
  not: notNullOnly('gemini'),
  additionalProperties: (schema, path) => {
    if (isPlain(schema.additionalProperties)) {
      refuse(path, 'gemini parameters have no additionalProperties: a dict cannot be expressed; use Schema.object() with known keys')
    }
    delete schema.additionalProperties
  },
  $ref: { refuse: 'gemini parameters have no $ref: a recursive schema (Schema.lazy) cannot be expressed' },
  oneOf: { refuse: 'gemini parameters have no oneOf' },
  allOf: { refuse: 'gemini parameters have no allOf; only intersections of plain objects with distinct keys can be merged' },
  prefixItems: { refuse: 'gemini parameters have no tuples (prefixItems); use an object with named fields or an array of one type' },
}

/** Gemini (OpenAPI subset): string enums, `nullable`, `propertyOrdering`; no refs, no unions. */
export function toGemini(input: JsonSchema): JsonSchema {
  return openapi(inlineRefs(prepare(input, 'gemini')), '$')
}

function openapi(input: JsonSchema, path: string): JsonSchema {
  let schema = applyKeywords(input, path, RULES, 'gemini')
  if (Array.isArray(schema.anyOf)) schema = collapseNullUnion(schema, path)
  if ('const' in schema) {
    schema.enum = [schema.const]
    delete schema.const
  }
  if (schema.type === undefined) {
    const type = inferType(schema)
    if (!type) refuse(path, untyped('gemini', schema))
    schema = { type, ...schema }
  }
  let types = toArray(schema.type) as string[]
  if (types.includes('null') && types.length > 1) {
    // OpenAPI says "may be null" with a flag rather than a second type
    types = types.filter(type => type !== 'null')
    schema.nullable = true
    if (Array.isArray(schema.enum)) schema.enum = schema.enum.filter(value => value !== null)
  }
  if (types.length !== 1) refuse(path, `gemini allows one type per schema, got ${JSON.stringify(schema.type)}`)
  const [type] = types
  schema.type = type
  if (Array.isArray(schema.enum) && (type !== 'string' || !schema.enum.every(value => typeof value === 'string'))) {
    // Gemini enums are string-only: a numeric or boolean choice keeps its type and loses the list
    delete schema.enum
  }
  if (type === 'object') {
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>
    schema.properties = Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, openapi(value, childPath(path, key))]))
    if (Array.isArray(schema.required)) {
      const missing = (schema.required as string[]).find(key => !Object.hasOwn(properties, key))
      if (missing !== undefined) refuse(path, `required names ${JSON.stringify(missing)}, which properties does not define`)
      if (!schema.required.length) delete schema.required
    }
    schema.propertyOrdering = Object.keys(properties)
  }
  if (type === 'array') {
    if (!isPlain(schema.items)) refuse(path, 'gemini needs items on every array')
    schema.items = openapi(schema.items, `${path}[*]`)
  }
  return schema
}

// `anyOf: [X, { type: 'null' }]` is X made nullable; any other union is refused.
function collapseNullUnion(schema: JsonSchema, path: string): JsonSchema {
  const narrowed = removeNull(schema)
  if (!narrowed || Array.isArray(narrowed.anyOf)) {
    refuse(path, 'gemini parameters have no anyOf: a union of different shapes (or a bitset) cannot be expressed')
  }
  return { ...narrowed, nullable: true }
}

/** Replaces each local `$ref` with a copy of its target; a cycle is refused. */
function inlineRefs(root: JsonSchema): JsonSchema {
  const defs = (isPlain(root.$defs) ? root.$defs : {}) as Record<string, JsonSchema>
  const { $defs: _, ...rest } = root
  const visit = (schema: JsonSchema, path: string, stack: string[]): JsonSchema => {
    if (typeof schema.$ref !== 'string') return mapChildren(schema, path, (child, at) => visit(child, at, stack))
    const { $ref: ref, ...siblings } = schema
    const name = ref.startsWith('#/$defs/') ? ref.slice('#/$defs/'.length) : undefined
    if (ref === '#' || (name !== undefined && stack.includes(name))) refuse(path, 'gemini parameters have no $ref: a recursive schema (Schema.lazy) cannot be expressed')
    if (name === undefined || !Object.hasOwn(defs, name)) refuse(path, `gemini parameters have no $ref, and ${JSON.stringify(ref)} cannot be inlined`)
    return visit({ ...defs[name], ...siblings }, path, [...stack, name])
  }
  return visit(rest, '$', [])
}
