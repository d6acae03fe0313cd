import type { JsonSchema } from '../json-schema'
import { isPlain, jsonEqual } from '../json-value'
import { splitAnnotations, toArray } from '../nullable'
import { childPath } from '../path'
import { dereferencer, refTarget } from './deref'
import { describeDict, describeSchema } from './describe'
import { encodedString } from './encode'
import { flattenObject } from './flatten'
import { Loosenings, type DialectConversion } from './loosening'
import { prepare } from './prepare'
import { applyKeywords, inferType, type KeywordRule, knownFormats, notNullOnly, UNREAD_BY_PROVIDERS } from './walk'

// The string formats Gemini accepts.
const FORMATS = ['date-time', 'date', 'time']

// How many times one definition is inlined along a path before the rest travels JSON-encoded.
const MAX_INLINE = 2

/**
 * Gemini's function-declaration `parameters`: an OpenAPI 3.0 subset. Constraints it lacks are
 * dropped and recorded (the runtime still validates each call); shapes come to this table only
 * once they are one typed schema (see {@link GeminiPass.lower}).
 */
const RULES: Record<string, KeywordRule> = {
  ...UNREAD_BY_PROVIDERS,
  type: 'keep',
  title: 'keep',
  description: 'keep',
  enum: 'keep',
  nullable: 'keep',
  properties: 'keep',
  required: 'keep',
  items: 'keep',
  minimum: 'keep',
  maximum: 'keep',
  minItems: 'keep',
  maxItems: 'keep',
  pattern: 'loosen',
  minLength: 'loosen',
  maxLength: 'loosen',
  multipleOf: 'loosen',
  exclusiveMinimum: 'loosen',
  exclusiveMaximum: 'loosen',
  format: knownFormats(FORMATS),
  not: notNullOnly,
  // a closed object is open here: keys no schema declares are not sent anyway
  additionalProperties: (schema) => {
    delete schema.additionalProperties
  },
  $defs: 'drop',
}

/**
 * Gemini (OpenAPI subset): one type per schema, string enums, `nullable`, `propertyOrdering`,
 * no `$ref`/`anyOf`/`allOf`/`const`/`additionalProperties`, and no object without properties.
 * Unions and intersections of objects are flattened, unions of one scalar type merged, a tuple
 * of one kind becomes an array; a recursive schema is inlined twice. What has no such form (a
 * dict, `any`, a union of kinds, a deeper recursion) travels as a JSON-encoded string.
 */
export function toGemini(input: JsonSchema): DialectConversion {
  const notes = new Loosenings()
  const root = prepare(input, 'gemini', notes)
  const schema = new GeminiPass(root, notes).lower(root, '$', [])
  return { schema, loosened: notes.loosened, encoded: notes.encoded }
}

type Kind = 'string' | 'number' | 'boolean' | 'object' | 'array'

class GeminiPass {
  private deref: (schema: JsonSchema) => JsonSchema

  constructor(root: JsonSchema, private notes: Loosenings) {
    this.deref = dereferencer(root)
  }

  /** The Gemini form of the values at `path`; `stack` names the definitions inlined on the way. */
  lower(input: JsonSchema, path: string, stack: string[]): JsonSchema {
    if (input.$ref !== undefined) return this.reference(input, path, stack)
    const [, assertions] = splitAnnotations(input)
    if (Array.isArray(assertions.allOf)) return this.lower(this.intersection(input, path), path, stack)
    if (Array.isArray(assertions.anyOf) || Array.isArray(assertions.oneOf)) return this.union(input, path, stack)
    if (Array.isArray(assertions.prefixItems)) return this.tuple(input, path, stack)
    let schema: JsonSchema = { ...input }
    if ('const' in schema) {
      schema.enum = [schema.const]
      delete schema.const
    }
    schema.type ??= inferType(schema)
    const types = toArray(schema.type ?? []) as string[]
    const nonNull = types.filter(type => type !== 'null')
    // no type (any, never), several, or null alone: nothing here states it
    if (nonNull.length !== 1) return this.encode(input, path)
    const type = nonNull[0]!
    schema.type = type
    if (types.includes('null')) {
      // OpenAPI says "may be null" with a flag rather than a second type
      schema.nullable = true
      if (Array.isArray(schema.enum)) schema.enum = schema.enum.filter(value => value !== null)
    }
    // keywords of another type constrain nothing here, and Gemini would read them
    if (type !== 'object') for (const key of ['properties', 'required', 'additionalProperties', 'patternProperties', 'propertyNames']) delete schema[key]
    if (type !== 'array') for (const key of ['items', 'minItems', 'maxItems']) delete schema[key]
    const root = path === '$'
    if (type === 'object' && (isPlain(schema.additionalProperties) || isPlain(schema.patternProperties))) {
      if (!root) return this.encode(input, path)
      // the arguments themselves cannot travel as a string: the object stays, its keys unchecked here
      this.notes.loosen(path, describeDict(assertions))
      const { additionalProperties: _, patternProperties: __, propertyNames: ___, ...rest } = schema
      schema = rest
    }
    // Gemini refuses an object without properties; the root may still be one (a tool without arguments)
    if (type === 'object' && !root && !Object.keys(isPlain(schema.properties) ? schema.properties : {}).length) return this.encode(input, path)
    if (type === 'array' && !isPlain(schema.items)) return this.encode(input, path)
    const dropped: string[] = []
    if (Array.isArray(schema.enum) && (type !== 'string' || !schema.enum.every(value => typeof value === 'string'))) {
      // Gemini enums are string-only: a numeric or boolean choice keeps its type and loses the list
      dropped.push(describeSchema({ enum: schema.enum }))
      delete schema.enum
    }
    const { schema: applied, loosened, blocked } = applyKeywords(schema, RULES)
    if (blocked) return this.encode(input, path)
    dropped.push(...loosened)
    if (dropped.length) this.notes.loosen(path, dropped.join('; '))
    schema = applied
    if (type === 'object') this.object(schema, path, stack)
    if (type === 'array') schema.items = this.lower(schema.items as JsonSchema, `${path}[*]`, stack)
    return schema
  }

  private object(schema: JsonSchema, path: string, stack: string[]) {
    const input = (schema.properties ?? {}) as Record<string, JsonSchema>
    const required = new Set(Array.isArray(schema.required) ? schema.required as string[] : [])
    const properties: Record<string, JsonSchema> = {}
    for (const [key, value] of Object.entries(input)) {
      // a property that may only be absent (an optional never) is best left out
      if (!required.has(key) && jsonEqual(splitAnnotations(value)[1], { type: 'null' })) continue
      Object.defineProperty(properties, key, { value: this.lower(value, childPath(path, key), stack), enumerable: true, writable: true, configurable: true })
    }
    schema.properties = properties
    const listed = [...required].filter(key => Object.hasOwn(properties, key))
    if (listed.length) schema.required = listed
    else delete schema.required
    schema.propertyOrdering = Object.keys(properties)
  }

  /** A `$ref` inlined, each definition at most {@link MAX_INLINE} times along one path. */
  private reference(input: JsonSchema, path: string, stack: string[]): JsonSchema {
    const name = refTarget(input.$ref)
    const target = this.deref(input)
    if (name === undefined || target === input) return this.encode(input, path)
    if (stack.filter(known => known === name).length >= MAX_INLINE) return encodedString(input, path, this.notes, target)
    return this.lower(target, path, [...stack, name])
  }

  /** An intersection prepare could not merge exactly: a flattened object, or its first typed part (each part holds every valid value). */
  private intersection(input: JsonSchema, path: string): JsonSchema {
    const flat = flattenObject(input, path, { notes: this.notes, deref: this.deref })
    if (flat) return flat
    const { allOf, ...rest } = input
    const [annotations, own] = splitAnnotations(rest)
    const parts = [...Object.keys(own).length ? [own] : [], ...allOf as JsonSchema[]]
    const chosen = parts.find(part => this.kindOf(part)) ?? parts[0]!
    this.notes.loosen(path, `all of: ${describeSchema(input)}`)
    return { ...chosen, ...annotations }
  }

  private union(input: JsonSchema, path: string, stack: string[]): JsonSchema {
    const { anyOf, oneOf, ...rest } = input
    const [annotations, own] = splitAnnotations(rest)
    if (Object.keys(own).length || (anyOf && oneOf)) {
      // a union beside other assertions is an intersection with it
      const parts = [own, ...anyOf ? [{ anyOf }] : [], ...oneOf ? [{ oneOf }] : []].filter(part => Object.keys(part).length)
      return this.lower({ allOf: parts, ...annotations }, path, stack)
    }
    const branches = (anyOf ?? oneOf) as JsonSchema[]
    const present = branches.filter(branch => !jsonEqual(splitAnnotations(this.deref(branch))[1], { type: 'null' }))
    const nullable = present.length < branches.length
    const withNull = (schema: JsonSchema) => nullable && schema.type !== undefined ? { ...schema, nullable: true } : schema
    if (present.length === 1) return withNull(this.lower({ ...present[0], ...annotations }, path, stack))
    const kinds = present.map(branch => this.kindOf(branch))
    const kind = kinds.every(known => known && known === kinds[0]) ? kinds[0] : undefined
    if (kind === 'object') {
      const flat = flattenObject({ anyOf: present, ...annotations }, path, { notes: this.notes, deref: this.deref })
      if (flat) return withNull(this.lower(flat, path, stack))
    } else if (kind === 'array') {
      const items = present.map(branch => this.deref(branch).items ?? {}) as JsonSchema[]
      this.notes.loosen(path, `one of: ${describeSchema({ anyOf: present })}`)
      return withNull(this.lower({ type: 'array', items: { anyOf: items }, ...annotations }, path, stack))
    } else if (kind) {
      return withNull(this.lower(this.scalars(present, kind, path, annotations), path, stack))
    }
    return this.encode(input, path)
  }

  /** Branches of one scalar kind as one schema: their enums joined (exact), or their type alone (recorded). */
  private scalars(branches: JsonSchema[], kind: Kind, path: string, annotations: JsonSchema): JsonSchema {
    const targets = branches.map(branch => splitAnnotations(this.deref(branch))[1])
    const whole = (target: JsonSchema) => target.type === 'integer'
      || (target.type === undefined && (Array.isArray(target.enum) ? target.enum : [target.const]).every(Number.isInteger))
    const type = kind === 'number' && targets.every(whole) ? 'integer' : kind
    const values: unknown[] = []
    for (const target of targets) {
      const listed = Array.isArray(target.enum) ? target.enum : 'const' in target ? [target.const] : undefined
      const only = Object.keys(target).every(key => key === 'type' || key === 'enum' || key === 'const')
      if (!listed || !only) {
        this.notes.loosen(path, `one of: ${describeSchema({ anyOf: branches })}`)
        return { type, ...annotations }
      }
      for (const value of listed) if (!values.some(known => jsonEqual(known, value))) values.push(value)
    }
    return { type, enum: values, ...annotations }
  }

  /** A tuple whose positions are of one kind becomes an array of them; any other travels encoded. */
  private tuple(input: JsonSchema, path: string, stack: string[]): JsonSchema {
    const { prefixItems, items, minItems, maxItems, ...rest } = input
    const positions = prefixItems as JsonSchema[]
    const kinds = positions.map(position => this.kindOf(position))
    if (!positions.length || !kinds.every(kind => kind && kind === kinds[0]) || (items !== undefined && items !== false && Object.keys(items as object).length)) {
      return this.encode(input, path)
    }
    const same = positions.every(position => jsonEqual(position, positions[0]))
    if (!same) this.notes.loosen(path, `${describeSchema(input)} (a tuple)`)
    const array: JsonSchema = {
      ...rest,
      type: 'array',
      items: same ? positions[0]! : { anyOf: positions },
      // schemastery's tuple ignores elements past its positions: only `items: false` or a
      // stated maxItems bounds the array
      ...items === false ? { maxItems: Math.min(positions.length, typeof maxItems === 'number' ? maxItems : Infinity) } : typeof maxItems === 'number' ? { maxItems } : {},
      ...minItems === undefined ? {} : { minItems },
    }
    return this.lower(array, path, stack)
  }

  private encode(input: JsonSchema, path: string): JsonSchema {
    return encodedString(input, path, this.notes)
  }

  /** The one JSON type (integer counted as number) every value of a schema has, if there is one. */
  private kindOf(input: JsonSchema, seen = new Set<unknown>()): Kind | undefined {
    if (seen.has(input.$ref)) return
    if (input.$ref !== undefined) seen.add(input.$ref)
    const schema = splitAnnotations(this.deref(input))[1]
    const kind = (type: unknown) => (type === 'integer' ? 'number' : type) as Kind
    if (schema.type !== undefined) {
      const types = [...new Set(toArray(schema.type).filter(type => type !== 'null').map(kind))]
      return types.length === 1 ? types[0] : undefined
    }
    if (Array.isArray(schema.enum) || 'const' in schema) {
      const type = inferType(schema)
      return typeof type === 'string' ? kind(type) : undefined
    }
    for (const key of ['anyOf', 'oneOf'] as const) {
      if (!Array.isArray(schema[key])) continue
      const kinds = (schema[key] as JsonSchema[])
        .filter(branch => !jsonEqual(splitAnnotations(branch)[1], { type: 'null' }))
        .map(branch => this.kindOf(branch, seen))
      return kinds.every(known => known && known === kinds[0]) ? kinds[0] : undefined
    }
    if (Array.isArray(schema.allOf)) return (schema.allOf as JsonSchema[]).map(part => this.kindOf(part, seen)).find(Boolean)
    if (Array.isArray(schema.prefixItems)) return 'array'
    if (isPlain(schema.properties)) return 'object'
  }
}
