// Internal helpers for plain JSON values (the package has no runtime dependency but schemastery).

export function isNullish(value: unknown): value is null | undefined {
  return value === null || value === undefined
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
