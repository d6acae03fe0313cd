import type { JsonSchema } from './json-schema'
import { jsonEqual } from './json-value'
import { splitAnnotations } from './nullable'

// Keywords an object part may carry and still merge: each checks its own keys independently.
const MERGEABLE = new Set(['type', 'properties', 'required', 'patternProperties'])

/**
 * Merges `{ type: 'object', properties, required, patternProperties }` schemas into one
 * object, or returns `undefined` when that would change their meaning. Without
 * `additionalProperties` an allOf of such objects is exactly the merged object, as long as no
 * key (or key pattern) is defined twice differently. The parts' own annotations are dropped.
 */
export function mergeObjects(parts: JsonSchema[]): JsonSchema | undefined {
  const properties: Record<string, unknown> = {}
  const patterns: Record<string, unknown> = {}
  const required = new Set<string>()
  for (const part of parts) {
    const [, assertions] = splitAnnotations(part)
    if (assertions.type !== 'object') return
    if (Object.keys(assertions).some(key => !MERGEABLE.has(key))) return
    if (!addAll(properties, assertions.properties) || !addAll(patterns, assertions.patternProperties)) return
    for (const key of (assertions.required ?? []) as string[]) required.add(key)
  }
  return {
    type: 'object',
    properties,
    ...required.size ? { required: [...required] } : {},
    ...Object.keys(patterns).length ? { patternProperties: patterns } : {},
  }
}

function addAll(target: Record<string, unknown>, source: unknown): boolean {
  for (const [key, value] of Object.entries((source ?? {}) as Record<string, unknown>)) {
    if (Object.hasOwn(target, key) && !jsonEqual(target[key], value)) return false
    // defineProperty, so that a property named __proto__ stays a property
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
  }
  return true
}
