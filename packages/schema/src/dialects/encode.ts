import type { JsonSchema } from '../json-schema'
import { describeSchema } from './describe'
import type { Loosenings } from './loosening'

/**
 * The form of a value no provider schema can state: a string holding its JSON text, the
 * description telling the model so (`(JSON-encoded string of an object with …)`). The path is
 * recorded; the pipeline decodes it (`decodeEncoded`) before the exact schema validates it.
 * `target` is what the value must be, when `schema` only points at it (a `$ref`).
 */
export function encodedString(schema: JsonSchema, path: string, notes: Loosenings, target: JsonSchema = schema): JsonSchema {
  const what = describeSchema(target)
  notes.encode(path, what)
  const note = `(JSON-encoded string of ${what})`
  const description = typeof schema.description === 'string' && schema.description ? `${schema.description} ${note}` : note
  return { type: 'string', description }
}
