import type { JsonSchema } from '../json-schema'
import { isPlain, jsonEqual } from '../json-value'
import { splitAnnotations, toArray } from '../nullable'
import { childPath } from '../path'
import type { Loosenings } from './loosening'
import { mergeAllOf } from './merge-all-of'

/** What flattening needs from the conversion: where to record loosenings, and how to follow a `$ref`. */
export interface FlattenContext {
  notes: Loosenings
  deref: (schema: JsonSchema) => JsonSchema
}

// Deep enough for intersections of unions of intersections; a cycle of references stops here.
const MAX_DEPTH = 8

/**
 * One object schema that accepts every object the given schema accepts: the Koishi
 * conditional config (`intersect([object, union([object, object])])`), nested intersections,
 * unions of objects. An intersection gathers every property (`required` if any part requires
 * it); a union declares each branch's properties (required only when every branch requires
 * them), a property's schemas across branches becoming one enum or an `anyOf`, and the
 * description says which properties go with which discriminator value. A union is the one
 * lossy step; it is recorded at `path`. `undefined` when the schema is not made of objects
 * (a dict, a scalar, an open schema). At the root, branches that take no object are left
 * out: tool arguments are always an object.
 */
export function flattenObject(schema: JsonSchema, path: string, ctx: FlattenContext, root = false): JsonSchema | undefined {
  return flatten(schema, path, ctx, root, 0)
}

function flatten(input: JsonSchema, path: string, ctx: FlattenContext, root: boolean, depth: number): JsonSchema | undefined {
  if (depth > MAX_DEPTH) return
  const [annotations, assertions] = splitAnnotations(ctx.deref(input))
  const { allOf, anyOf, oneOf, $defs: _, not, ...own } = assertions
  // "not null" beside an object says what the type says
  if (not !== undefined && !jsonEqual(not, { type: 'null' })) return
  const pieces: JsonSchema[] = []
  if (Object.keys(own).length) {
    const piece = objectPiece(own, root)
    if (!piece) return
    pieces.push(piece)
  }
  for (const part of Array.isArray(allOf) ? allOf as JsonSchema[] : []) {
    if (!Object.keys(splitAnnotations(part)[1]).length) continue
    const flat = flatten(part, path, ctx, root, depth + 1)
    if (!flat) return
    pieces.push(flat)
  }
  for (const branches of [anyOf, oneOf]) {
    if (!Array.isArray(branches)) continue
    const flat = flattenUnion(branches as JsonSchema[], path, ctx, root, depth)
    if (!flat) return
    pieces.push(flat)
  }
  if (!pieces.length) return
  const merged = pieces.length === 1 ? pieces[0]! : intersect(pieces, path, ctx, depth)
  const description = [annotations.description, merged.description].filter(Boolean).join(' ')
  return { ...merged, ...annotations, ...description ? { description } : {} }
}

/** The object keywords of one part, or `undefined` when they say more than a plain object. */
function objectPiece(own: JsonSchema, root: boolean): JsonSchema | undefined {
  const types = own.type === undefined ? ['object'] : toArray(own.type) as string[]
  if (!types.includes('object') || (!root && types.some((type) => type !== 'object' && type !== 'null'))) return
  for (const [key, value] of Object.entries(own)) {
    // a closed object is open here: keys no part declares are not sent anyway
    if (key === 'additionalProperties' && value === false) continue
    if (!['type', 'properties', 'required'].includes(key)) return
  }
  const properties = isPlain(own.properties) ? own.properties : {}
  const required = Array.isArray(own.required) ? (own.required as string[]).filter((key) => Object.hasOwn(properties, key)) : []
  return { type: 'object', properties, ...required.length ? { required } : {} }
}

/** An allOf of flattened objects: every property, required where any part requires it. */
function intersect(pieces: JsonSchema[], path: string, ctx: FlattenContext, depth: number): JsonSchema {
  const properties: Record<string, JsonSchema> = {}
  const required = new Set<string>()
  const descriptions: string[] = []
  for (const piece of pieces) {
    if (typeof piece.description === 'string') descriptions.push(piece.description)
    for (const [key, value] of Object.entries(piece.properties as Record<string, JsonSchema>)) {
      const known = Object.hasOwn(properties, key) ? properties[key] : undefined
      define(properties, key, known ? both(known, value, childPath(path, key), ctx, depth) : value)
    }
    for (const key of (piece.required ?? []) as string[]) required.add(key)
  }
  return {
    type: 'object',
    properties,
    ...required.size ? { required: [...required] } : {},
    ...descriptions.length ? { description: descriptions.join(' ') } : {},
  }
}

/** One property defined by two parts of an intersection: merged exactly, flattened, or left an allOf for the dialect. */
function both(a: JsonSchema, b: JsonSchema, path: string, ctx: FlattenContext, depth: number): JsonSchema {
  const [annotationsA, assertionsA] = splitAnnotations(a)
  const [annotationsB, assertionsB] = splitAnnotations(b)
  const annotations = { ...annotationsB, ...annotationsA }
  if (jsonEqual(assertionsA, assertionsB)) return { ...assertionsA, ...annotations }
  const merged = mergeAllOf({ allOf: [assertionsA, assertionsB] })
  if (!Array.isArray(merged.allOf)) return { ...merged, ...annotations }
  const flat = flatten(merged, path, ctx, false, depth + 1)
  return { ...flat ?? merged, ...annotations }
}

/** A union of objects as one object that accepts each branch. */
function flattenUnion(branches: JsonSchema[], path: string, ctx: FlattenContext, root: boolean, depth: number): JsonSchema | undefined {
  const flats: JsonSchema[] = []
  for (const branch of branches) {
    const [, assertions] = splitAnnotations(ctx.deref(branch))
    if (jsonEqual(assertions, { type: 'null' })) continue
    const flat = flatten(branch, path, ctx, root, depth + 1)
    if (flat) flats.push(flat)
    // at the root a branch that takes no object cannot match the arguments
    else if (!root || takesObjects(assertions)) return
  }
  if (!flats.length) return
  if (flats.every((flat) => jsonEqual(flat, flats[0]))) return flats[0]
  const properties: Record<string, JsonSchema> = {}
  for (const flat of flats) {
    for (const key of Object.keys(flat.properties as JsonSchema)) {
      if (Object.hasOwn(properties, key)) continue
      define(properties, key, unionOf(flats.filter((other) => Object.hasOwn(other.properties as JsonSchema, key)).map((other) => (other.properties as any)[key])))
    }
  }
  const required = Object.keys(properties).filter((key) => flats.every((flat) => ((flat.required ?? []) as string[]).includes(key)))
  const rule = branchesRule(flats)
  ctx.notes.loosen(path, `one of: ${rule}`)
  return { type: 'object', properties, ...required.length ? { required } : {}, description: `One of: ${rule}.` }
}

/** The schemas one property has across branches, as one: the same, one enum, or an anyOf. */
function unionOf(schemas: JsonSchema[]): JsonSchema {
  const [annotations] = splitAnnotations(schemas[0]!)
  const assertions = schemas.map((schema) => splitAnnotations(schema)[1])
  const distinct = assertions.filter((schema, index) => assertions.findIndex((other) => jsonEqual(other, schema)) === index)
  if (distinct.length === 1) return schemas[0]!
  const values = distinct.map(listedValues)
  if (values.every(Boolean)) {
    const all = (values as unknown[][]).flat().filter((value, index, list) => list.findIndex((other) => jsonEqual(other, value)) === index)
    const types = new Set(distinct.map((schema) => schema.type))
    const type = types.size === 1 ? [...types][0] : undefined
    // true and false are every boolean: the type says it all
    if (type === 'boolean' && all.includes(true) && all.includes(false) && all.length === 2) return { type, ...annotations }
    return { ...type !== undefined ? { type } : {}, enum: all, ...annotations }
  }
  return { anyOf: distinct, ...annotations }
}

// The values a schema lists, when it is only a list of primitives (an enum, a const).
function listedValues(schema: JsonSchema): unknown[] | undefined {
  const keys = Object.keys(schema).filter((key) => key !== 'type')
  if (keys.length !== 1) return
  const values = Array.isArray(schema.enum) ? schema.enum : 'const' in schema ? [schema.const] : undefined
  if (values?.every((value) => value === null || typeof value !== 'object')) return values
}

/** Which properties go with which branch: `mode "a" with token; mode "b" with url (required)`. */
function branchesRule(flats: JsonSchema[]): string {
  const props = flats.map((flat) => flat.properties as Record<string, JsonSchema>)
  const required = flats.map((flat) => new Set((flat.required ?? []) as string[]))
  const shared = Object.keys(props[0]!).filter((key) => props.every((p) => Object.hasOwn(p, key)))
  // a discriminator lists values in every branch, and no value in two of them
  const discriminators = shared.filter((key) => {
    const values = props.map((p) => listedValues(splitAnnotations(p[key]!)[1])?.map((value) => JSON.stringify(value)))
    if (!values.every(Boolean)) return false
    const all = values.flat()
    return new Set(all).size === all.length
  })
  return flats.map((_, i) => {
    const tags = discriminators.map((key) => `${key} ${listedValues(splitAnnotations(props[i]![key]!)[1])!.map((value) => JSON.stringify(value)).join(' or ')}`)
    const own = Object.keys(props[i]!).filter((key) => !discriminators.includes(key)
      && (!shared.includes(key) || (required[i]!.has(key) && !required.every((set) => set.has(key)))))
    const listed = own.map((key) => required[i]!.has(key) ? `${key} (required)` : key)
    if (!tags.length) return listed.length ? `an object with ${listed.join(', ')}` : 'an object with only the shared keys'
    return listed.length ? `${tags.join(', ')} with ${listed.join(', ')}` : tags.join(', ')
  }).join('; ')
}

function takesObjects(schema: JsonSchema): boolean {
  if (schema.type !== undefined) return toArray(schema.type).includes('object')
  const values = Array.isArray(schema.enum) ? schema.enum : 'const' in schema ? [schema.const] : undefined
  return !values || values.some((value) => isPlain(value))
}

function define(target: Record<string, JsonSchema>, key: string, value: JsonSchema) {
  // defineProperty, so that a property named __proto__ stays a property
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}
