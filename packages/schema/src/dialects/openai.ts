import type { JsonSchema } from '../json-schema'
import { isPlain } from '../json-value'
import { addNull, splitAnnotations, toArray } from '../nullable'
import { childPath } from '../path'
import { DIALECT_LIMITS } from './limits'
import { prepare } from './prepare'
import { applyKeywords, inferType, type KeywordRule, knownFormats, UNREAD_BY_PROVIDERS, notNullOnly, refuse, untyped } from './walk'

const limits = DIALECT_LIMITS.openai

// The string formats strict mode accepts.
const FORMATS = ['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']

/**
 * Strict mode's keyword subset. Annotations and constraints it does not support are dropped:
 * the runtime still validates every call with the schemastery schema, so a value that slips
 * past the advertised schema gets a validation error the model can act on. Keywords that
 * change the shape of a value (tuples, maps, intersections) are refused instead.
 */
const RULES: Record<string, KeywordRule> = {
  ...UNREAD_BY_PROVIDERS,
  type: 'keep',
  title: 'keep',
  description: 'keep',
  enum: 'keep',
  const: 'keep',
  properties: 'keep',
  required: 'keep',
  items: 'keep',
  anyOf: 'keep',
  $defs: 'keep',
  $ref: (schema, path) => {
    if (typeof schema.$ref !== 'string' || !schema.$ref.startsWith('#')) refuse(path, 'openai strict mode only follows local references (#/$defs/…)')
  },
  pattern: 'keep',
  multipleOf: 'keep',
  minimum: 'keep',
  maximum: 'keep',
  exclusiveMinimum: 'keep',
  exclusiveMaximum: 'keep',
  minItems: 'keep',
  maxItems: 'keep',
  minLength: 'drop',
  maxLength: 'drop',
  format: knownFormats(FORMATS),
  // exclusivity is a constraint like the others: anyOf says the rest
  oneOf: (schema) => {
    schema.anyOf = schema.oneOf
    delete schema.oneOf
  },
  not: notNullOnly('openai strict mode'),
  additionalProperties: (schema, path) => {
    if (isPlain(schema.additionalProperties)) {
      refuse(path, 'openai strict mode needs every object key listed: a dict (additionalProperties with a schema) cannot be expressed; use Schema.object() with known keys, or an array of { key, value } objects')
    }
  },
  prefixItems: { refuse: 'openai strict mode has no tuples (prefixItems); use an object with named fields or an array of one type' },
  allOf: { refuse: 'openai strict mode has no allOf; only intersections of plain objects with distinct keys can be merged' },
}

/** OpenAI strict mode: every key required (optional ones nullable), every object closed. */
export function toOpenAI(input: JsonSchema): JsonSchema {
  const root = prepare(input, 'openai')
  const pass = new StrictPass(isPlain(root.$defs) ? root.$defs as Record<string, JsonSchema> : {})
  const { $defs: _, ...body } = root
  const result = pass.visit(body, '$', 0)
  if (pass.names.length) result.$defs = Object.fromEntries(pass.names.map(name => [name, pass.def(name)]))
  pass.checkLimits()
  return result
}

class StrictPass {
  properties = 0
  enumValues = 0
  chars = 0
  readonly names: string[]
  private done = new Map<string, JsonSchema>()
  private pending = new Set<string>()

  constructor(private defs: Record<string, JsonSchema>) {
    this.names = Object.keys(defs)
  }

  /** A definition in its strict form, converted on first use. */
  def(name: string): JsonSchema | undefined {
    if (!this.done.has(name)) {
      if (this.pending.has(name) || !Object.hasOwn(this.defs, name)) return
      this.pending.add(name)
      this.chars += name.length
      this.done.set(name, this.visit(this.defs[name], `$.$defs.${name}`, 0))
      this.pending.delete(name)
    }
    return this.done.get(name)
  }

  visit(input: JsonSchema, path: string, depth: number): JsonSchema {
    let schema = applyKeywords(input, path, RULES, 'openai')
    for (const value of Array.isArray(schema.enum) ? schema.enum : 'const' in schema ? [schema.const] : []) {
      if (value !== null && typeof value === 'object') refuse(path, `openai strict mode only takes strings, numbers, booleans and null as enum or const values, got ${JSON.stringify(value)}`)
      this.chars += String(value).length
    }
    if (Array.isArray(schema.enum)) this.enumValues += schema.enum.length
    if (schema.type === undefined && !schema.anyOf && !schema.$ref) {
      const type = inferType(schema)
      if (!type) refuse(path, untyped('openai strict mode', schema))
      schema = { type, ...schema }
    }
    const types = toArray(schema.type ?? []) as string[]
    if (types.length > 2 || (types.length === 2 && !types.includes('null')) || (types.length === 1 && types[0] === 'null')) {
      refuse(path, `openai strict mode allows one type, or one type and null; got ${JSON.stringify(schema.type)}`)
    }
    if (types.includes('object')) this.closeObject(schema, path, depth + 1)
    if (types.includes('array')) {
      if (!isPlain(schema.items)) refuse(path, 'openai strict mode needs items on every array')
      schema.items = this.visit(schema.items, `${path}[*]`, depth)
    }
    if (typeof schema.$ref === 'string' && schema.$ref.startsWith('#/$defs/')) this.def(schema.$ref.slice('#/$defs/'.length))
    if (Array.isArray(schema.anyOf)) {
      const branches = schema.anyOf.map(branch => this.visit(branch, path, depth))
      if (branches.length === 1) {
        const { anyOf: _, ...rest } = schema
        schema = { ...branches[0], ...rest }
      } else {
        schema.anyOf = branches
      }
    }
    return schema
  }

  checkLimits() {
    if (this.properties > limits.maxProperties!) refuse('$', `openai allows ${limits.maxProperties} object properties in all, this schema has ${this.properties}`)
    if (this.enumValues > limits.maxEnumValues!) refuse('$', `openai allows ${limits.maxEnumValues} enum values in all, this schema has ${this.enumValues}`)
    if (this.chars > limits.maxStringLength!) refuse('$', `openai allows ${limits.maxStringLength} characters of names and enum values in all, this schema has ${this.chars}`)
  }

  private closeObject(schema: JsonSchema, path: string, depth: number) {
    if (depth > limits.maxDepth!) refuse(path, `openai allows ${limits.maxDepth} levels of nested objects`)
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>
    const required = new Set(Array.isArray(schema.required) ? schema.required as string[] : [])
    for (const key of required) {
      if (!Object.hasOwn(properties, key)) refuse(path, `required names ${JSON.stringify(key)}, which properties does not define`)
    }
    // strict mode requires every key; an optional one says "absent" with null, which schemastery reads the same way
    schema.properties = Object.fromEntries(Object.entries(properties).map(([key, value]) => {
      this.properties++
      this.chars += key.length
      const child = this.visit(value, childPath(path, key), depth)
      return [key, required.has(key) ? child : this.nullable(child)]
    }))
    schema.required = Object.keys(properties)
    schema.additionalProperties = false
  }

  /**
   * Adds null the way the profiles accept: into a typed schema's `type`, into one typed
   * branch of an anyOf, or into a one-level copy of a referenced definition. Only a
   * reference to a definition still being converted gets a `{ type: 'null' }` branch,
   * which OpenAI takes (its SDKs emit it) though the third-party profile does not.
   */
  private nullable(schema: JsonSchema): JsonSchema {
    const [annotations, assertions] = splitAnnotations(schema)
    const keys = Object.keys(assertions)
    if (keys.length === 1 && typeof assertions.$ref === 'string' && assertions.$ref.startsWith('#/$defs/')) {
      const target = this.def(assertions.$ref.slice('#/$defs/'.length))
      if (target) return this.nullable({ ...target, ...annotations })
    }
    if (keys.length === 1 && Array.isArray(assertions.anyOf)) {
      const branches = assertions.anyOf as JsonSchema[]
      const index = branches.findIndex(branch => typeof branch.type === 'string' && !('anyOf' in branch))
      if (index >= 0) return { ...schema, anyOf: branches.map((branch, i) => i === index ? addNull(branch) : branch) }
    }
    return addNull(schema)
  }
}
