import type Schema from 'schemastery'
import { closestNames } from './closest-names'
import type { RevisionRefusal } from './result-params'

/** A key an edit set that the tool's schema does not name where it was set. */
export interface UnknownEditKey {
  /** Where, from the root `$`: `$.targets[0].hots`. */
  path: string
  key: string
  /** The names the schema has at that place, for a "did you mean". */
  names: readonly string[]
}

/** Deeper than any arguments a call can carry; stops a cyclic value. */
const MAX_DEPTH = 64

/**
 * The first key in `edited` that the schema names nowhere at its place, and that the edit
 * set (absent from `original` there, or with another value). schemastery keeps an object's
 * unknown keys and the tool reads only its own, so `{"Env": "staging"}` over `env: "prod"`
 * would pass validation and run `prod`: an edit may only set fields the schema names. Walks
 * the value with the schema through objects, arrays, tuples, unions and intersects (a key
 * any branch names is known); a dict (`Schema.dict`) or `Schema.any()` takes any key. A key
 * the model itself sent and the edit left alone is not the edit's doing, so it is let be.
 */
export function findUnknownEditKey(schema: Schema, edited: unknown, original: unknown): UnknownEditKey | undefined {
  return walk([schema], edited, original, '$', 0)
}

/** What `findUnknownEditKey` found, as an edit's refusal: where, and the name they likely meant. */
export function unknownEditKeyRefusal({ path, key, names }: UnknownEditKey): RevisionRefusal {
  const [suggestion] = closestNames(key, names, 1)
  return suggestion === undefined ? { kind: 'unknown_field', path, key, names } : { kind: 'unknown_field', path, key, names, suggestion }
}

function walk(schemas: Schema[], value: unknown, original: unknown, path: string, depth: number): UnknownEditKey | undefined {
  if (!value || typeof value !== 'object' || depth > MAX_DEPTH) return undefined
  const shapes = flatten(schemas)
  // Nothing here is an object or array schema (a string field sent an object): the validator says so.
  if (shapes.some((schema) => schema.type === 'any')) return undefined
  const before = original && typeof original === 'object' ? original as Record<string, unknown> : undefined
  const at = (key: string) => before && Object.hasOwn(before, key) ? before[key] : undefined
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const inner: Schema[] = []
      for (const schema of shapes) {
        if (schema.type === 'array' && schema.inner) inner.push(schema.inner)
        else if (schema.type === 'tuple' && schema.list?.[i]) inner.push(schema.list[i])
      }
      const found = inner.length ? walk(inner, value[i], at(String(i)), `${path}[${i}]`, depth + 1) : undefined
      if (found) return found
    }
    return undefined
  }
  const objects = shapes.filter((schema) => schema.type === 'object')
  // A dict of `never` is how `closed()` refuses keys: it names none, and opens nothing.
  const dicts = shapes.filter((schema) => schema.type === 'dict' && schema.inner && schema.inner.type !== 'never')
  if (!objects.length && !dicts.length) return undefined
  const names = [...new Set(objects.flatMap((schema) => Object.keys(schema.dict ?? {})))]
  for (const key of Object.keys(value)) {
    const inner: Schema[] = []
    for (const schema of objects) if (schema.dict && Object.hasOwn(schema.dict, key)) inner.push(schema.dict[key])
    for (const schema of dicts) inner.push(schema.inner!)
    const child = childPath(path, key)
    const field = (value as Record<string, unknown>)[key]
    if (!inner.length) {
      if (before && Object.hasOwn(before, key) && sameJson(before[key], field)) continue
      return { path: child, key, names }
    }
    const found = walk(inner, field, at(key), child, depth + 1)
    if (found) return found
  }
  return undefined
}

/** The schemas a value meets here: unions and intersects opened, transforms and lazies looked through. */
function flatten(schemas: Schema[], out: Schema[] = [], seen = new Set<Schema>()): Schema[] {
  for (const schema of schemas) {
    if (!schema || seen.has(schema)) continue
    seen.add(schema)
    switch (schema.type) {
      case 'union':
      case 'intersect':
        flatten(schema.list ?? [], out, seen)
        break
      case 'transform':
        flatten(schema.inner ? [schema.inner] : [], out, seen)
        break
      case 'lazy': {
        const inner = schema.inner ?? schema.builder?.()
        flatten(inner ? [inner] : [], out, seen)
        break
      }
      default:
        out.push(schema)
    }
  }
  return out
}

/** `$.a` for identifier keys, `$["a b"]` otherwise: the paths validation problems name. */
function childPath(path: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}
