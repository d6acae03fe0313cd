import type { JsonSchema } from '../json-schema'
import { prepare } from './prepare'

/**
 * Anthropic's `input_schema` is JSON Schema 2020-12 with an object at the root: the shared
 * preparation (no `$schema`, merged object intersections, no null where omission says it) is all.
 */
export function toAnthropic(input: JsonSchema): JsonSchema {
  return prepare(input, 'anthropic')
}
