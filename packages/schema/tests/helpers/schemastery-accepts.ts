import Schema from 'schemastery'

/** Whether schemastery accepts `value` (on a copy: it fills defaults in place); other errors propagate. */
export function schemasteryAccepts(schema: Schema, value: unknown): boolean {
  try {
    schema(structuredClone(value))
    return true
  } catch (error) {
    if (Schema.ValidationError.is(error)) return false
    throw error
  }
}
