import Schema from 'schemastery'
import { SchemaError } from './errors'
import type { JsonSchema } from './json-schema'

/** Options for {@link fromJsonSchema}. */
export interface FromJsonSchemaOptions {
  /**
   * Follow schemastery's convention that `null` means absent: an optional property (or a
   * tuple position that may be missing) given `null` counts as not given, and a required
   * property whose schema allows `null` becomes optional. This is what tool arguments from
   * strict-mode models need. `false` keeps JSON Schema's exact verdicts: null-rejecting
   * optional properties get an extra check, and shapes that cannot be exact are refused.
   * @default true
   */
  nullAsAbsent?: boolean
}

type Json = JsonSchema | boolean

// Keywords that only annotate, plus containers read through `$ref`; they never change a verdict.
const annotations = new Set([
  '$schema', '$id', '$comment', '$defs', 'definitions', '$anchor', '$dynamicAnchor', '$vocabulary',
  'title', 'description', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly', 'format',
  'contentEncoding', 'contentMediaType', 'contentSchema',
])

// Keywords schemastery cannot express; anything else unknown is ignored, as JSON Schema says.
const refused = new Set([
  'not', 'if', 'then', 'else', 'dependentRequired', 'dependentSchemas', 'dependencies', 'propertyNames',
  'unevaluatedProperties', 'unevaluatedItems', 'contains', 'minContains', 'maxContains', 'uniqueItems',
  'minProperties', 'maxProperties', '$dynamicRef', '$recursiveRef', '$recursiveAnchor',
])

// Meta-schemas whose vocabularies are the standard ones; a custom one may switch validation off.
const standardDialects = new Set([
  'https://json-schema.org/draft/2020-12/schema', 'https://json-schema.org/draft/2019-09/schema',
  'http://json-schema.org/draft-07/schema#', 'http://json-schema.org/draft-07/schema',
])

const typeKeywords: Record<string, string[]> = {
  string: ['minLength', 'maxLength', 'pattern'],
  number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  object: ['properties', 'required', 'additionalProperties', 'patternProperties'],
  array: ['items', 'prefixItems', 'minItems', 'maxItems'],
}

const jsonTypes = ['null', 'boolean', 'object', 'array', 'number', 'string'] as const
type JsonType = typeof jsonTypes[number]

/** Appends a key to a schema path the way validation paths read: `$.properties.a`, `$.properties["a b"]`. */
function child(path: string, key: string) {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`
}

function escapeRegExp(text: string) {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&')
}

function hasNullProperty(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasNullProperty)
  if (value === null || typeof value !== 'object') return false
  return Object.values(value).some((inner) => inner === null || hasNullProperty(inner))
}

function typeOfValue(value: unknown): JsonType {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value as JsonType
}

/**
 * schemastery gives objects, dicts, arrays and tuples a `{}`/`[]` default, which would fill
 * in (and then validate) a value JSON Schema leaves absent.
 */
function bare(schema: Schema): Schema {
  return schema.default(undefined as never)
}

/** A schema that also takes "absent"; a lazy is wrapped, as cloning it would rebuild its target. */
function optional(schema: Schema): Schema {
  return schema.type === 'lazy' ? Schema.union([schema]) : schema.required(false)
}

class Converter {
  private lazies = new Map<string, Schema>()
  private targets = new Map<string, Schema>()

  constructor(private root: Json, private exact: boolean) {}

  fail(path: string, message: string, code: SchemaError.Code = 'UNSUPPORTED_KEYWORD'): never {
    throw new SchemaError(code, path, message)
  }

  /** Whether a JSON schema accepts `null`; exact for every keyword this converter supports. */
  acceptsNull(json: Json, seen = new Set<Json>()): boolean {
    if (typeof json === 'boolean') return json
    if (seen.has(json)) return true
    seen.add(json)
    const { type, enum: values, const: constant, allOf, anyOf, oneOf, $ref } = json as any
    if (type !== undefined && !(Array.isArray(type) ? type : [type]).includes('null')) return false
    if (Array.isArray(values) && !values.includes(null)) return false
    if ('const' in json && constant !== null) return false
    if (Array.isArray(allOf) && !allOf.every((inner: Json) => this.acceptsNull(inner, seen))) return false
    if (Array.isArray(anyOf) && !anyOf.some((inner: Json) => this.acceptsNull(inner, seen))) return false
    if (Array.isArray(oneOf) && oneOf.filter((inner: Json) => this.acceptsNull(inner, new Set(seen))).length !== 1) return false
    if (typeof $ref === 'string') return this.acceptsNull(this.resolvePointer($ref, '$'), seen)
    return true
  }

  /** The JSON types a schema can accept at all, to prove `oneOf` branches disjoint. */
  types(json: Json, seen = new Set<Json>()): Set<JsonType> {
    if (json === false) return new Set()
    if (json === true || seen.has(json)) return new Set(jsonTypes)
    seen.add(json)
    let result = new Set<JsonType>(jsonTypes)
    const narrow = (allowed: Iterable<JsonType>) => {
      const next = new Set(allowed)
      result = new Set([...result].filter((type) => next.has(type)))
    }
    const { type, enum: values, allOf, anyOf, $ref } = json as any
    if (type !== undefined) narrow((Array.isArray(type) ? type : [type]).map((t: string) => (t === 'integer' ? 'number' : t) as JsonType))
    if (Array.isArray(values)) narrow(values.map(typeOfValue))
    if ('const' in json) narrow([typeOfValue(json.const)])
    if (Array.isArray(allOf)) allOf.forEach((inner: Json) => narrow(this.types(inner, seen)))
    if (Array.isArray(anyOf)) narrow(anyOf.flatMap((inner: Json) => [...this.types(inner, seen)]))
    if (typeof $ref === 'string') narrow(this.types(this.resolvePointer($ref, '$'), seen))
    return result
  }

  resolvePointer(ref: string, path: string): Json {
    if (!ref.startsWith('#') || (ref.length > 1 && !ref.startsWith('#/'))) {
      this.fail(`${path}.$ref`, `only local JSON pointer references are supported, got "${ref}"`)
    }
    let node: any = this.root
    for (const raw of ref === '#' ? [] : ref.slice(2).split('/')) {
      const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~')
      if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) {
        this.fail(`${path}.$ref`, `"${ref}" points nowhere`, 'INVALID_SCHEMA')
      }
      node = node[key]
      // a nested $id moves the base URI, which this resolver does not follow
      if (node && typeof node === 'object' && '$id' in node) this.fail(`${path}.$ref`, `"${ref}" crosses an $id`)
    }
    return node
  }

  ref(ref: string, path: string): Schema {
    const known = this.lazies.get(ref)
    if (known) return known
    const lazy = Schema.lazy(() => this.targets.get(ref)!)
    this.lazies.set(ref, lazy)
    const target = this.convert(this.resolvePointer(ref, path), `${path}.$ref`)
    if (target.type === 'lazy') this.fail(`${path}.$ref`, `"${ref}" only refers to itself`)
    this.targets.set(ref, target)
    return lazy
  }

  /** Converts a schema as it stands where it is always present: `required` iff it rejects null. */
  convert(json: Json, path: string): Schema {
    if (json === true) return Schema.any()
    if (json === false) return Schema.never().required()
    if (json === null || typeof json !== 'object' || Array.isArray(json)) this.fail(path, 'a schema must be an object or a boolean', 'INVALID_SCHEMA')
    for (const key of Object.keys(json)) {
      if (refused.has(key)) this.fail(`${path}.${key}`, `"${key}" has no schemastery form`)
    }
    if ('$schema' in json && !standardDialects.has(json.$schema as string)) this.fail(`${path}.$schema`, `unknown meta-schema "${json.$schema}"`)
    if ('$id' in json && json !== this.root) this.fail(`${path}.$id`, 'a nested $id (a new base URI) is not supported')

    const parts: Schema[] = []
    const typePart = this.typePart(json, path)
    if (typePart) parts.push(typePart)
    if (Array.isArray(json.enum)) parts.push(this.constants(json.enum, `${path}.enum`))
    else if (json.enum !== undefined) this.fail(`${path}.enum`, 'enum must be an array', 'INVALID_SCHEMA')
    if ('const' in json) parts.push(this.constants([json.const], `${path}.const`))
    for (const [i, inner] of this.list(json, 'allOf', path).entries()) parts.push(this.convert(inner, `${path}.allOf[${i}]`))
    const anyOf = this.list(json, 'anyOf', path)
    if (anyOf.length) parts.push(Schema.union(anyOf.map((inner, i) => this.convert(inner, `${path}.anyOf[${i}]`))))
    const oneOf = this.list(json, 'oneOf', path)
    if (oneOf.length) parts.push(this.oneOf(oneOf, `${path}.oneOf`))
    if (typeof json.$ref === 'string') parts.push(this.ref(json.$ref, path))

    if (parts.length === 1 && parts[0]!.type === 'lazy') return parts[0]!
    let schema = parts.length === 0 ? Schema.any() : parts.length === 1 ? parts[0]! : Schema.intersect(parts)
    schema = schema.required(!this.acceptsNull(json))
    if (typeof json.description === 'string') schema = schema.description(json.description)
    return schema
  }

  list(json: JsonSchema, key: string, path: string): Json[] {
    const value = json[key]
    if (value === undefined) return []
    if (!Array.isArray(value) || !value.length) this.fail(`${path}.${key}`, `${key} must be a non-empty array`, 'INVALID_SCHEMA')
    return value
  }

  /** oneOf is a union only where its branches are provably disjoint, so "exactly one" equals "any". */
  oneOf(list: Json[], path: string): Schema {
    const kinds = list.map((inner) => {
      const types = this.types(inner)
      if (!this.acceptsNull(inner)) types.delete('null')
      return types
    })
    const constants = list.map((inner) => typeof inner === 'object' && Object.keys(inner).every((key) => key === 'const' || key === 'enum' || annotations.has(key))
      ? [...'const' in inner ? [inner.const] : [], ...Array.isArray(inner.enum) ? inner.enum : []]
      : undefined)
    for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length; j++) {
        const typesOverlap = [...kinds[i]!].some((type) => kinds[j]!.has(type))
        const a = constants[i], b = constants[j]
        const valuesOverlap = !a || !b || a.some((x) => b.some((y) => JSON.stringify(x) === JSON.stringify(y)))
        if (typesOverlap && valuesOverlap) this.fail(path, 'oneOf is supported only when its branches cannot match the same value')
      }
    }
    return Schema.union(list.map((inner, i) => this.convert(inner, `${path}[${i}]`)))
  }

  constants(values: unknown[], path: string): Schema {
    if (values.some(hasNullProperty)) this.fail(path, 'schemastery compares a null property as equal to a missing one')
    const consts = values.map((value) => Schema.const(value))
    return consts.length === 1 ? consts[0]! : Schema.union(consts)
  }

  typePart(json: JsonSchema, path: string): Schema | undefined {
    let types: string[]
    if (json.type !== undefined) {
      types = Array.isArray(json.type) ? json.type : [json.type]
      for (const type of types) {
        if (type !== 'integer' && !(jsonTypes as readonly string[]).includes(type)) this.fail(`${path}.type`, `unknown type "${type}"`, 'INVALID_SCHEMA')
      }
    } else if (Object.values(typeKeywords).flat().some((key) => key in json)) {
      types = [...jsonTypes]
    } else {
      return
    }
    const branches: Schema[] = []
    if (types.includes('boolean')) branches.push(Schema.boolean())
    if (types.includes('string')) branches.push(this.string(json, path))
    if (types.includes('number') || types.includes('integer')) branches.push(this.number(json, path, !types.includes('number')))
    if (types.includes('object')) branches.push(this.object(json, path))
    if (types.includes('array')) branches.push(this.array(json, path))
    // null alone is a value no other type takes; null beside others is the `required` flag
    if (!branches.length) return Schema.const(null)
    return branches.length === 1 ? branches[0]! : Schema.union(branches)
  }

  string(json: JsonSchema, path: string): Schema {
    const { minLength = 0, maxLength, pattern } = json as { minLength?: number; maxLength?: number; pattern?: string }
    // JSON Schema counts code points and schemastery's min/max count UTF-16 units, so lengths become a `u` regexp
    const length = minLength > 0 || maxLength !== undefined ? `(?=[\\s\\S]{${minLength},${maxLength ?? ''}}$)` : ''
    if (!length && pattern === undefined) return Schema.string()
    const source = pattern === undefined ? `^${length}` : length ? `^${length}[\\s\\S]*?(?:${pattern})` : pattern
    try {
      return Schema.string().pattern(new RegExp(source, 'u'))
    } catch (error) {
      this.fail(`${path}.pattern`, `the pattern is not a valid unicode regexp: ${(error as Error).message}`)
    }
  }

  number(json: JsonSchema, path: string, integer: boolean): Schema {
    let { minimum: min, maximum: max } = json as { minimum?: number; maximum?: number }
    const { exclusiveMinimum, exclusiveMaximum, multipleOf } = json as Record<string, number | undefined>
    if (!integer && (exclusiveMinimum !== undefined || exclusiveMaximum !== undefined)) {
      this.fail(`${path}.${exclusiveMinimum !== undefined ? 'exclusiveMinimum' : 'exclusiveMaximum'}`, 'schemastery bounds are inclusive')
    }
    let step = integer ? 1 : undefined
    if (multipleOf !== undefined) {
      if (integer && !Number.isInteger(multipleOf)) this.fail(`${path}.multipleOf`, 'a fractional multipleOf of an integer is not supported')
      // schemastery's exact decimal arithmetic works on plain decimals, not on exponent notation
      if (!Number.isInteger(multipleOf) && !/^\d+\.\d+$/.test(String(multipleOf))) this.fail(`${path}.multipleOf`, `multipleOf ${multipleOf} is too small to check exactly`)
      step = multipleOf
    }
    if (integer) {
      // for integers every bound can be made an inclusive multiple of the step
      if (exclusiveMinimum !== undefined) min = Math.max(min ?? -Infinity, Math.floor(exclusiveMinimum) + 1)
      if (exclusiveMaximum !== undefined) max = Math.min(max ?? Infinity, Math.ceil(exclusiveMaximum) - 1)
      if (min !== undefined) min = Math.ceil(min / step!) * step!
      if (max !== undefined) max = Math.floor(max)
    } else if (step !== undefined && min !== undefined) {
      // schemastery counts the step from `min`, so `min` itself must be a multiple
      try {
        Schema.number().step(step)(min)
      } catch {
        this.fail(`${path}.multipleOf`, 'schemastery counts multipleOf from minimum, which is not itself a multiple')
      }
    }
    let schema = Schema.number()
    if (min !== undefined && min > -Infinity) schema = schema.min(min)
    if (max !== undefined && max < Infinity) schema = schema.max(max)
    if (step !== undefined) schema = schema.step(step)
    return schema
  }

  object(json: JsonSchema, path: string): Schema {
    const properties = (json.properties ?? {}) as Record<string, Json>
    const required = (json.required ?? []) as string[]
    const patterns = (json.patternProperties ?? {}) as Record<string, Json>
    const keys = [...new Set([...Object.keys(properties), ...required])]
    const dict: Record<string, Schema> = {}
    const nullRejecting: string[] = []
    for (const key of keys) {
      const at = child(`${path}.properties`, key)
      // schemastery reads `data[key]`, which finds Object.prototype members on every object
      if (key in Object.prototype) this.fail(at, `a property named "${key}" reads Object.prototype in schemastery`)
      const inner = Object.hasOwn(properties, key) ? properties[key]! : true
      const schema = this.convert(inner, at)
      const nullable = this.acceptsNull(inner)
      if (required.includes(key) && !nullable) {
        dict[key] = schema
        continue
      }
      if (required.includes(key) && this.exact) this.fail(`${path}.required`, `schemastery cannot require "${key}" while its value may be null`)
      if (!nullable && this.exact) nullRejecting.push(key)
      dict[key] = this.withDefault(optional(schema), inner)
    }
    const parts = [bare(Schema.object(dict))]
    if (nullRejecting.length) {
      // present-but-null is rejected by checking just these keys; a strict dict skips the others
      parts.push(bare(Schema.dict(Schema.any().required(), Schema.union(nullRejecting.map((key) => Schema.const(key))))))
    }
    const sources: string[] = []
    for (const [pattern, inner] of Object.entries(patterns)) {
      sources.push(pattern)
      parts.push(bare(Schema.dict(this.convert(inner, child(`${path}.patternProperties`, pattern)), this.keyPattern(pattern, path))))
    }
    const additional = json.additionalProperties as Json | undefined
    if (additional !== undefined && additional !== true) {
      const declared = Object.keys(properties).map(escapeRegExp)
      const source = '^' + (declared.length ? `(?!(?:${declared.join('|')})$)` : '') + sources.map((p) => `(?![\\s\\S]*?(?:${p}))`).join('')
      parts.push(bare(Schema.dict(this.convert(additional, `${path}.additionalProperties`), this.keyPattern(source, path))))
    }
    // inside an intersect every part runs strict, so each dict checks only the keys its pattern takes
    return parts.length === 1 ? parts[0]! : Schema.intersect(parts)
  }

  keyPattern(source: string, path: string): Schema {
    try {
      return Schema.string().pattern(new RegExp(source, 'u'))
    } catch (error) {
      this.fail(`${path}.patternProperties`, `not a valid unicode regexp: ${(error as Error).message}`)
    }
  }

  /** Keeps a `default` only where schemastery accepts it; JSON Schema treats it as an annotation. */
  withDefault(schema: Schema, json: Json): Schema {
    if (typeof json !== 'object' || !('default' in json) || json.default === null) return schema
    const candidate = schema.default(json.default)
    try {
      candidate(undefined)
      return candidate
    } catch {
      return schema
    }
  }

  array(json: JsonSchema, path: string): Schema {
    const { minItems, maxItems } = json as { minItems?: number; maxItems?: number }
    const items = json.items as Json | undefined
    const bounded = (schema: Schema) => {
      if (minItems !== undefined) schema = schema.min(minItems)
      if (maxItems !== undefined) schema = schema.max(maxItems)
      return bare(schema)
    }
    if (!Array.isArray(json.prefixItems)) {
      if (items === false) return bounded(Schema.array(Schema.any()).max(0))
      return bounded(Schema.array(items === undefined ? Schema.any() : this.convert(items, `${path}.items`)))
    }
    const list = (json.prefixItems as Json[]).map((inner, i) => {
      const at = `${path}.prefixItems[${i}]`
      const schema = this.convert(inner, at)
      if ((minItems ?? 0) > i || this.acceptsNull(inner)) return (minItems ?? 0) > i ? schema : optional(schema)
      if (this.exact) this.fail(at, 'a position that may be missing cannot reject null in schemastery')
      return optional(schema)
    })
    if (items !== undefined && items !== true && items !== false && Object.keys(items).length) {
      this.fail(`${path}.items`, 'items beside prefixItems has no schemastery form')
    }
    const tuple = bare(Schema.tuple(list))
    const limit = items === false ? Math.min(maxItems ?? Infinity, list.length) : maxItems
    if (minItems === undefined && limit === undefined) return tuple
    let length = Schema.array(Schema.any())
    if (minItems !== undefined) length = length.min(minItems)
    if (limit !== undefined) length = length.max(limit)
    return Schema.intersect([tuple, bare(length)])
  }
}

/**
 * Converts a JSON Schema (2020-12) into a schemastery schema, for tools that arrive as
 * JSON Schema (MCP). Covers the subset schemastery can express; anything else throws a
 * `SchemaError` with code `UNSUPPORTED_KEYWORD` and the keyword's path. See
 * docs/schema-validation.md for the subset and the official test suite counts.
 *
 * @example
 * const schema = fromJsonSchema({ type: 'object', properties: { n: { type: 'integer', minimum: 0 } }, required: ['n'] })
 * schema({ n: 3 }) // { n: 3 }
 */
export function fromJsonSchema(json: JsonSchema | boolean, options: FromJsonSchemaOptions = {}): Schema {
  return new Converter(json, !(options.nullAsAbsent ?? true)).convert(json, '$')
}
