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
  return flatten(schema, path, ctx, root, 0)?.schema
}

/**
 * A flattened object, and its open keys: those a union branch leaves undeclared, so that the
 * branch lets any value through there. Their schema says what the declaring branches want;
 * it binds nothing once another part of an intersection declares the key (`intersect`).
 */
interface Flat {
  schema: JsonSchema
  open: ReadonlySet<string>
}

const NO_KEYS: ReadonlySet<string> = new Set()

function flatten(input: JsonSchema, path: string, ctx: FlattenContext, root: boolean, depth: number): Flat | undefined {
  if (depth > MAX_DEPTH) return
  const [annotations, assertions] = splitAnnotations(ctx.deref(input))
  const { allOf, anyOf, oneOf, $defs: _, not, ...own } = assertions
  // "not null" beside an object says what the type says
  if (not !== undefined && !jsonEqual(not, { type: 'null' })) return
  const pieces: Flat[] = []
  if (Object.keys(own).length) {
    const piece = objectPiece(own, root)
    if (!piece) return
    pieces.push({ schema: piece, open: NO_KEYS })
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
  const description = [annotations.description, merged.schema.description].filter(Boolean).join(' ')
  return { schema: { ...merged.schema, ...annotations, ...description ? { description } : {} }, open: merged.open }
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

/**
 * An allOf of flattened objects: every property, required where any part requires it. A key
 * that some part declares outright takes what those parts allow; an open key's schema only
 * counts when no part declares the key outright. `intersect([object({ fwd: boolean() }),
 * union([object({ fwd: const(true) }), object({})])])` takes `{ fwd: false }`: the constant
 * must not narrow `fwd` to `true`.
 */
function intersect(pieces: Flat[], path: string, ctx: FlattenContext, depth: number): Flat {
  const declared = new Map<string, { bound: JsonSchema[]; open: JsonSchema[] }>()
  const required = new Set<string>()
  const descriptions: string[] = []
  for (const { schema: piece, open } of pieces) {
    if (typeof piece.description === 'string') descriptions.push(piece.description)
    for (const [key, value] of Object.entries(piece.properties as Record<string, JsonSchema>)) {
      const entry = declared.get(key) ?? { bound: [], open: [] }
      declared.set(key, entry);
      (open.has(key) ? entry.open : entry.bound).push(value)
    }
    for (const key of (piece.required ?? []) as string[]) required.add(key)
  }
  const properties: Record<string, JsonSchema> = {}
  const open = new Set<string>()
  for (const [key, { bound, open: hints }] of declared) {
    if (!bound.length) {
      open.add(key)
      define(properties, key, unionOf(hints))
      continue
    }
    const value = bound.reduce((known, next) => both(known, next, childPath(path, key), ctx, depth))
    // a branch's description still helps when the parts that bind the key have none
    const hint = hints.find((schema) => typeof schema.description === 'string')
    define(properties, key, value.description === undefined && hint ? { ...value, description: hint.description } : value)
  }
  return {
    schema: {
      type: 'object',
      properties,
      ...required.size ? { required: [...required] } : {},
      ...descriptions.length ? { description: descriptions.join(' ') } : {},
    },
    open,
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
  return { ...flat?.schema ?? merged, ...annotations }
}

/**
 * A union of objects as one object that accepts each branch. A key is open when a branch
 * leaves it undeclared (or open): that branch takes any value there.
 */
function flattenUnion(branches: JsonSchema[], path: string, ctx: FlattenContext, root: boolean, depth: number): Flat | undefined {
  const flats: Flat[] = []
  for (const branch of branches) {
    const [, assertions] = splitAnnotations(ctx.deref(branch))
    if (jsonEqual(assertions, { type: 'null' })) continue
    const flat = flatten(branch, path, ctx, root, depth + 1)
    if (flat) flats.push(flat)
    // at the root a branch that takes no object cannot match the arguments
    else if (!root || takesObjects(assertions)) return
  }
  if (!flats.length) return
  const open = new Set<string>()
  const declares = (flat: Flat, key: string) => Object.hasOwn(flat.schema.properties as JsonSchema, key)
  if (flats.every((flat) => jsonEqual(flat.schema, flats[0]!.schema))) {
    for (const flat of flats) for (const key of flat.open) open.add(key)
    return { schema: flats[0]!.schema, open }
  }
  const properties: Record<string, JsonSchema> = {}
  for (const flat of flats) {
    for (const key of Object.keys(flat.schema.properties as JsonSchema)) {
      if (Object.hasOwn(properties, key)) continue
      const declaring = flats.filter((other) => declares(other, key))
      if (declaring.length < flats.length || declaring.some((other) => other.open.has(key))) open.add(key)
      define(properties, key, unionOf(declaring.map((other) => (other.schema.properties as any)[key])))
    }
  }
  const schemas = flats.map((flat) => flat.schema)
  const required = Object.keys(properties).filter((key) => schemas.every((flat) => ((flat.required ?? []) as string[]).includes(key)))
  const rule = branchesRule(schemas)
  ctx.notes.loosen(path, `one of: ${rule}`)
  return { schema: { type: 'object', properties, ...required.length ? { required } : {}, description: `One of: ${rule}.` }, open }
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
    const listed = own.map((key) => {
      // a constant the branch alone sets (`fwd true`) says when its other keys apply
      const values = listedValues(splitAnnotations(props[i]![key]!)[1])
      const named = values ? `${key} ${values.map((value) => JSON.stringify(value)).join(' or ')}` : key
      return required[i]!.has(key) ? `${named} (required)` : named
    })
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
