import type { JsonSchema } from '../json-schema'
import { isPlain } from '../json-value'
import { excludedSource, otherKeysPattern } from '../key-patterns'
import { isNever } from '../nullable'

/**
 * Reads the strict dicts of a merged intersect back as the keywords `fromJsonSchema` made
 * them from: a never-valued dict over the keys a pattern refuses is `propertyNames`, and a
 * dict over the keys that are neither declared nor matched by another pattern is
 * `additionalProperties` (`false` when its values are never). Each rewrite is exact on its
 * own, whatever made the dict; the rest stays `patternProperties`.
 */
export function restoreKeyKeywords(schema: JsonSchema): JsonSchema {
  if (!isPlain(schema.patternProperties)) return schema
  const { patternProperties, ...result } = schema
  const patterns: Record<string, JsonSchema> = { ...patternProperties as Record<string, JsonSchema> }
  for (const [pattern, value] of Object.entries(patterns)) {
    const source = excludedSource(pattern)
    if (source === undefined || !isNever(value) || 'propertyNames' in result) continue
    result.propertyNames = { pattern: source }
    delete patterns[pattern]
  }
  const declared = Object.keys((result.properties ?? {}) as JsonSchema)
  for (const [pattern, value] of Object.entries(patterns)) {
    const others = Object.keys(patterns).filter((other) => other !== pattern)
    if (pattern !== otherKeysPattern(declared, others)) continue
    result.additionalProperties = isNever(value) ? false : value
    delete patterns[pattern]
    break
  }
  if (Object.keys(patterns).length) result.patternProperties = patterns
  // a pure dict needs no empty `properties` beside its key keywords
  const keyed = 'additionalProperties' in result || 'propertyNames' in result || 'patternProperties' in result
  if (keyed && isPlain(result.properties) && !Object.keys(result.properties).length) delete result.properties
  return result
}
