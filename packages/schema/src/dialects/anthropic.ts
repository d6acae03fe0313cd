import type { JsonSchema } from '../json-schema'
import { Loosenings, type DialectConversion } from './loosening'
import { prepare } from './prepare'

/**
 * Anthropic's `input_schema` is JSON Schema 2020-12 with an object at the root: the shared
 * preparation (no `$schema`, merged intersections, no null where omission says it, one object
 * at the root) is all. Only a flattened root loosens anything.
 */
export function toAnthropic(input: JsonSchema): DialectConversion {
  const notes = new Loosenings()
  const schema = prepare(input, 'anthropic', notes)
  return { schema, loosened: notes.loosened, encoded: notes.encoded }
}
