import type { JsonSchema } from './json-schema'
import { jsonEqual } from './json-value'
import { splitAnnotations } from './nullable'

/**
 * Merges `{ type: 'object', properties, required }` schemas into one object, or returns
 * `undefined` when that would change their meaning. Without `additionalProperties` an
 * allOf of such objects is exactly the merged object, as long as no key is defined twice
 * differently. The parts' own annotations are dropped.
 */
export function mergeObjects(parts: JsonSchema[]): JsonSchema | undefined {
  const properties: Record<string, unknown> = {}
  const required = new Set<string>()
  for (const part of parts) {
    const [, assertions] = splitAnnotations(part)
    if (assertions.type !== 'object') return
    if (Object.keys(assertions).some(key => !['type', 'properties', 'required'].includes(key))) return
    for (const [key, value] of Object.entries((assertions.properties ?? {}) as Record<string, unknown>)) {
      if (Object.hasOwn(properties, key) && !jsonEqual(properties[key], value)) return
      // defineProperty, so that a property named __proto__ stays a property
      Object.defineProperty(properties, key, { value, enumerable: true, writable: true, configurable: true })
    }
    for (const key of (assertions.required ?? []) as string[]) required.add(key)
  }
  return { type: 'object', properties, ...required.size ? { required: [...required] } : {} }
}
