import type { JsonSchema } from '../json-schema'
import { isPlain, jsonEqual } from '../json-value'
import { addNull, splitAnnotations, toArray } from '../nullable'
import { childPath } from '../path'
import { dereferencer, refTarget } from './deref'
import { describeDict, describeSchema } from './describe'
import { flattenObject } from './flatten'
import { DIALECT_LIMITS } from './limits'
import { type Loosening, Loosenings, type DialectConversion } from './loosening'
import { prepare } from './prepare'
import { applyKeywords, inferType, ruleOf, type KeywordRule, knownFormats, mapChildren, notNullOnly, UNREAD_BY_PROVIDERS } from './walk'

const limits = DIALECT_LIMITS.openai

// The string formats strict mode accepts.
const FORMATS = ['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']

/**
 * Strict mode's keyword subset. Constraints it does not support are dropped and recorded (the
 * runtime still validates every call with the schemastery schema); shapes it cannot state
 * (dicts, tuples, open values) block strict mode for the tool.
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
  $ref: (schema) => refTarget(schema.$ref) === undefined ? `a reference strict mode cannot follow (${schema.$ref})` : undefined,
  pattern: 'keep',
  multipleOf: 'keep',
  minimum: 'keep',
  maximum: 'keep',
  exclusiveMinimum: 'keep',
  exclusiveMaximum: 'keep',
  minItems: 'keep',
  maxItems: 'keep',
  minLength: 'loosen',
  maxLength: 'loosen',
  format: knownFormats(FORMATS),
  // exclusivity is a constraint like the others: anyOf says the rest
  oneOf: (schema) => {
    schema.anyOf = schema.oneOf
    delete schema.oneOf
  },
  not: notNullOnly,
  additionalProperties: (schema) => isPlain(schema.additionalProperties) ? describeDict(schema) : undefined,
  patternProperties: (schema) => describeDict(schema),
  prefixItems: (schema) => `${describeSchema(schema)} (a tuple)`,
}

/**
 * OpenAI: strict mode (every key required, optional ones nullable, every object closed) when
 * it can state the schema; otherwise the tool goes with `strict: false`, and the parameters
 * are the prepared 2020-12 schema, whose every rule the model reads but strict mode would
 * not enforce. `loosened` then names what strict mode could not say.
 */
export function toOpenAI(input: JsonSchema): DialectConversion {
  const notes = new Loosenings()
  const root = prepare(input, 'openai', notes)
  const pass = new StrictPass(root)
  const schema = pass.run()
  if (!pass.blocked.length) {
    notes.add(pass.notes)
    return { schema, loosened: notes.loosened, encoded: [], strict: true }
  }
  for (const { path, rule } of pass.blocked) notes.loosen(path, rule)
  return { schema: nonStrict(root, '$'), loosened: notes.loosened, encoded: [], strict: false }
}

/** Parameters for `strict: false`: JSON Schema as it is, except that every array says its items (OpenAI refuses one that does not). */
function nonStrict(input: JsonSchema, path: string): JsonSchema {
  const schema = mapChildren(input, path, nonStrict)
  if (schema.type !== undefined && toArray(schema.type).includes('array') && schema.items === undefined) schema.items = {}
  return schema
}

// A value that may be anything (but null): `{}`, `{ not: { type: 'null' } }`.
function isOpen(schema: JsonSchema) {
  const [, assertions] = splitAnnotations(schema)
  const keys = Object.keys(assertions)
  return !keys.length || (keys.length === 1 && jsonEqual(assertions.not, { type: 'null' }))
}

class StrictPass {
  readonly notes = new Loosenings()
  readonly blocked: Loosening[] = []
  private properties = 0
  private enumValues = 0
  private chars = 0
  private defs: Record<string, JsonSchema>
  private done = new Map<string, JsonSchema>()
  private pending = new Set<string>()
  private deref: (schema: JsonSchema) => JsonSchema

  constructor(private root: JsonSchema) {
    this.defs = isPlain(root.$defs) ? root.$defs as Record<string, JsonSchema> : {}
    this.deref = dereferencer(root)
  }

  run(): JsonSchema {
    const { $defs: _, ...body } = this.root
    const result = this.visit(body, '$', 0)
    const names = Object.keys(this.defs)
    if (names.length) result.$defs = Object.fromEntries(names.map(name => [name, this.def(name, '$')]))
    this.checkLimits()
    return result
  }

  private block(path: string, rule: string) {
    if (!this.blocked.some(known => known.path === path && known.rule === rule)) this.blocked.push({ path, rule })
  }

  /** A definition in its strict form, converted on first use, at the path of that use. */
  private def(name: string, path: string): JsonSchema | undefined {
    if (!this.done.has(name)) {
      if (this.pending.has(name) || !Object.hasOwn(this.defs, name)) return
      this.pending.add(name)
      this.chars += name.length
      this.done.set(name, this.visit(this.defs[name]!, path, 0))
      this.pending.delete(name)
    }
    return this.done.get(name)
  }

  private visit(input: JsonSchema, path: string, depth: number): JsonSchema {
    let source = input
    if (Array.isArray(source.allOf)) {
      // what prepare could not merge exactly: a superset object, or no strict form
      const flat = flattenObject(source, path, { notes: this.notes, deref: this.deref })
      if (!flat) {
        this.block(path, describeSchema(source))
        return source
      }
      source = flat
    }
    const { schema: applied, loosened, blocked } = applyKeywords(source, RULES)
    if (blocked) {
      this.block(path, blocked)
      return applied
    }
    if (loosened.length) this.notes.loosen(path, loosened.join('; '))
    let schema = applied
    for (const value of Array.isArray(schema.enum) ? schema.enum : 'const' in schema ? [schema.const] : []) {
      if (value !== null && typeof value === 'object') {
        this.block(path, Array.isArray(schema.enum) ? ruleOf('enum', schema.enum) : ruleOf('const', schema.const))
        return schema
      }
      this.chars += String(value).length
    }
    if (Array.isArray(schema.enum)) this.enumValues += schema.enum.length
    if (schema.type === undefined && !schema.anyOf && !schema.$ref) {
      const type = inferType(schema)
      if (!type) {
        this.block(path, describeSchema(source))
        return schema
      }
      schema = { type, ...schema }
    }
    const types = toArray(schema.type ?? []) as string[]
    if (types.length > 2 || (types.length === 2 && !types.includes('null')) || (types.length === 1 && types[0] === 'null')) {
      this.block(path, describeSchema(source))
      return schema
    }
    if (types.includes('object')) this.closeObject(schema, path, depth + 1)
    if (types.includes('array')) {
      if (!isPlain(schema.items)) {
        this.block(path, describeSchema({ ...source, items: {} }))
        return schema
      }
      schema.items = this.visit(schema.items, `${path}[*]`, depth)
    }
    const target = refTarget(schema.$ref)
    if (target) this.def(target, path)
    if (Array.isArray(schema.anyOf)) {
      // a union with an open branch (Koishi's Schema.computed) takes anything
      if ((schema.anyOf as JsonSchema[]).some(isOpen)) {
        this.block(path, describeSchema({ anyOf: schema.anyOf.filter(isOpen) }))
        return schema
      }
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

  private checkLimits() {
    if (this.properties > limits.maxProperties!) this.block('$', `more than ${limits.maxProperties} object properties in all (${this.properties})`)
    if (this.enumValues > limits.maxEnumValues!) this.block('$', `more than ${limits.maxEnumValues} enum values in all (${this.enumValues})`)
    if (this.chars > limits.maxStringLength!) this.block('$', `more than ${limits.maxStringLength} characters of names and enum values in all (${this.chars})`)
  }

  private closeObject(schema: JsonSchema, path: string, depth: number) {
    if (depth > limits.maxDepth!) this.block(path, `more than ${limits.maxDepth} levels of nested objects`)
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>
    const required = new Set(Array.isArray(schema.required) ? schema.required as string[] : [])
    const closed: Record<string, JsonSchema> = {}
    for (const [key, value] of Object.entries(properties)) {
      // a property that may only be absent (an optional never) is best left out of a closed object
      if (!required.has(key) && jsonEqual(splitAnnotations(value)[1], { type: 'null' })) continue
      this.properties++
      this.chars += key.length
      const child = this.visit(value, childPath(path, key), depth)
      // strict mode requires every key; an optional one says "absent" with null, which schemastery reads the same way
      Object.defineProperty(closed, key, { value: required.has(key) ? child : this.nullable(child), enumerable: true, writable: true, configurable: true })
    }
    schema.properties = closed
    schema.required = Object.keys(closed)
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
    const target = refTarget(assertions.$ref)
    if (keys.length === 1 && target) {
      const resolved = this.def(target, '$')
      if (resolved) return this.nullable({ ...resolved, ...annotations })
    }
    if (keys.length === 1 && Array.isArray(assertions.anyOf)) {
      const branches = assertions.anyOf as JsonSchema[]
      const index = branches.findIndex(branch => typeof branch.type === 'string' && !('anyOf' in branch))
      if (index >= 0) return { ...schema, anyOf: branches.map((branch, i) => i === index ? addNull(branch) : branch) }
    }
    return addNull(schema)
  }
}
