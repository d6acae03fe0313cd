// Internal helpers for plain JSON values (the package has no runtime dependency but schemastery).

import type { JsonSchema } from './json-schema'

export function isNullish(value: unknown): value is null | undefined {
  return value === null || value === undefined
}

/** A non-null, non-array object: a JSON object, or a subschema that is not `true`/`false`. */
export function isPlain(value: unknown): value is JsonSchema {
  return !!value && typeof value === 'object' && !Array.isArray(value)
}

/** `value` as JSON carries it (a Date becomes its ISO string); `undefined` when JSON cannot carry it. */
export function jsonCopy(value: unknown): unknown {
  try {
    const text = JSON.stringify(value)
    return text === undefined ? undefined : JSON.parse(text)
  } catch {}
}

/** Structural equality of JSON values. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (!a || !b || typeof a !== 'object' || typeof b !== 'object') return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const keys = Object.keys(a)
  if (keys.length !== Object.keys(b).length) return false
  return keys.every(key => Object.hasOwn(b, key) && jsonEqual((a as any)[key], (b as any)[key]))
}
