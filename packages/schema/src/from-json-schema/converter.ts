import Schema from 'schemastery'
import { compileValidator } from '../compile-validator'
import { definition, isDefinitionName } from '../definition'
import type { Loosening } from '../dialects/loosening'
import { SchemaError } from '../errors'
import type { JsonSchema } from '../json-schema'
import { annotations, jsonTypes, notKind, refused, standardDialects, typeKeywords, type Json, type JsonType } from './keywords'
import { convertNumber, convertString } from './scalars'
import { convertArray, convertObject } from './structures'

function hasNullProperty(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasNullProperty)
  if (value === null || typeof value !== 'object') return false
  return Object.values(value).some((inner) => inner === null || hasNullProperty(inner))
}

/** The values `enum` and `const` list. */
function listedValues(json: JsonSchema): unknown[] {
  const values = Array.isArray(json.enum) ? [...json.enum] : []
  if ('const' in json) values.push(json.const)
  return values
}

/** Whether a schema takes a string, number or boolean as it is; other values are not asked. */
function takesScalar(schema: Schema, value: unknown): boolean {
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return false
  // compileValidator, not schemastery: it runs imported patterns on the linear-time engine
  const result = compileValidator(schema)(value)
  return result.ok && result.value === value
}

function typeOfValue(value: unknown): JsonType {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value as JsonType
}

/** One conversion run: keyword checks, `$ref` targets and combinators; each JSON type's keywords convert in scalars/structures. */
export class Converter {
  private lazies = new Map<string, Schema>()
  private targets = new Map<string, Schema>()
  private names = new Set<string>()

  constructor(private root: Json, readonly exact: boolean, private onLoosen?: (loosening: Loosening) => void) {}

  /** Reports a rule of the imported schema the converted one does not enforce. */
  loosen(path: string, rule: string): void {
    this.onLoosen?.({ path, rule })
  }

  fail(path: string, message: string, code: SchemaError.Code = 'UNSUPPORTED_KEYWORD'): never {
    throw new SchemaError(code, path, message)
  }

  /** Whether a JSON schema accepts `null`; exact for every keyword this converter supports. */
  acceptsNull(json: Json, seen = new Set<Json>()): boolean {
    if (typeof json === 'boolean') return json
    if (seen.has(json)) return true
    seen.add(json)
    const { type, enum: values, const: constant, allOf, anyOf, oneOf, $ref, nullable } = json as any
    // `nullable: true` is OpenAPI's way (and Gemini's) to add null to the type
    if (type !== undefined && !(Array.isArray(type) ? type : [type]).includes('null') && nullable !== true) return false
    if (notKind(json)) return false
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
    const { type, enum: values, allOf, anyOf, $ref, nullable } = json as any
    const not = notKind(json)
    if (not === 'all') return new Set()
    if (not === 'null') narrow(jsonTypes.filter((t) => t !== 'null'))
    if (type !== undefined) {
      const listed = (Array.isArray(type) ? type : [type]).map((t: string) => (t === 'integer' ? 'number' : t) as JsonType)
      narrow(nullable === true ? [...listed, 'null'] : listed)
    }
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
    // a definition keeps its name, so that toJsonSchema writes it back to `$defs` under it
    const name = /^#\/(?:\$defs|definitions)\/([^/]+)$/.exec(ref)?.[1]
    const built = Schema.lazy(() => this.targets.get(ref)!)
    // `#/definitions/a` beside `#/$defs/a` would be two definitions of one name: the first keeps it
    const named = name !== undefined && isDefinitionName(name) && !this.names.has(name)
    if (named) this.names.add(name)
    const lazy = named ? definition(name, built) : built
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
    const not = notKind(json)
    if ('not' in json && !not) this.fail(`${path}.not`, '"not" has no schemastery form, except not: { type: "null" } and not: {}')

    const parts: Schema[] = []
    const typePart = this.typePart(json, path)
    if (Array.isArray(json.enum)) parts.push(this.constants(json.enum, `${path}.enum`))
    else if (json.enum !== undefined) this.fail(`${path}.enum`, 'enum must be an array', 'INVALID_SCHEMA')
    if ('const' in json) parts.push(this.constants([json.const], `${path}.const`))
    // A typed enum (`{ type: 'string', enum: [...] }`) is its values alone when the type takes
    // each of them; an intersect there would reach the dialects as an allOf they refuse.
    if (typePart && !(parts.length && listedValues(json).every((value) => value === null || takesScalar(typePart, value)))) {
      parts.unshift(typePart)
    }
    for (const [i, inner] of this.list(json, 'allOf', path).entries()) parts.push(this.convert(inner, `${path}.allOf[${i}]`))
    const anyOf = this.list(json, 'anyOf', path)
    if (anyOf.length) parts.push(Schema.union(anyOf.map((inner, i) => this.convert(inner, `${path}.anyOf[${i}]`))))
    const oneOf = this.list(json, 'oneOf', path)
    if (oneOf.length) parts.push(this.oneOf(oneOf, `${path}.oneOf`))
    if (typeof json.$ref === 'string') parts.push(this.ref(json.$ref, path))
    // "not null" is the `required` flag below; "not anything" accepts nothing
    if (not === 'all') parts.push(Schema.never())

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
    } else if (typeKeywords.some((key) => key in json)) {
      types = [...jsonTypes]
    } else {
      return
    }
    const branches: Schema[] = []
    if (types.includes('boolean')) branches.push(Schema.boolean())
    if (types.includes('string')) branches.push(convertString(this, json, path))
    if (types.includes('number') || types.includes('integer')) branches.push(convertNumber(this, json, path, !types.includes('number')))
    if (types.includes('object')) branches.push(convertObject(this, json, path))
    if (types.includes('array')) branches.push(convertArray(this, json, path))
    // null alone is a value no other type takes; null beside others is the `required` flag
    if (!branches.length) return Schema.const(null)
    return branches.length === 1 ? branches[0]! : Schema.union(branches)
  }
}
