import { SchemaError } from '../../src/errors'

/** The SchemaError `fn` throws, as `{ code, path }` (undefined fields if it threw something else). */
export function schemaErrorOf(fn: () => unknown): { code?: string; path?: string } {
  try {
    fn()
  } catch (error) {
    return SchemaError.is(error) ? { code: error.code, path: error.path } : { code: `not a SchemaError: ${error}` }
  }
  return { code: 'did not throw' }
}
