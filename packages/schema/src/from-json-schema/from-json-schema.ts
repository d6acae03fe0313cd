import type Schema from 'schemastery'
import type { JsonSchema } from '../json-schema'
import type { Loosening } from '../dialects/loosening'
import { Converter } from './converter'

/** Options for {@link fromJsonSchema}. */
export interface FromJsonSchemaOptions {
  /**
   * Follow schemastery's convention that `null` means absent: an optional property (or a
   * tuple position that may be missing) given `null` counts as not given, and a required
   * property whose schema allows `null` becomes optional. This is what tool arguments from
   * strict-mode models need. `false` keeps JSON Schema's exact verdicts: null-rejecting
   * optional properties get an extra check, and shapes that cannot be exact are refused.
   * @default true
   */
  nullAsAbsent?: boolean
  /**
   * Called for each rule of the schema the result does not enforce: a `pattern` (or a key
   * pattern) the linear-time engine cannot run — a backreference, lookaround, a count over
   * 1000 — is kept out rather than run on the backtracking engine. `{ path, rule }` as in a
   * dialect conversion's `loosened`.
   */
  onLoosen?: (loosening: Loosening) => void
}

/**
 * Converts a JSON Schema (2020-12) into a schemastery schema, for tools that arrive as
 * JSON Schema (MCP). Covers the subset schemastery can express; anything else throws a
 * `SchemaError` with code `UNSUPPORTED_KEYWORD` and the keyword's path. Its patterns run on
 * the linear-time engine (`re2js`) in validators `compileValidator` builds. See
 * docs/schema-validation.md for the subset and the official test suite counts.
 *
 * @example
 * const schema = fromJsonSchema({ type: 'object', properties: { n: { type: 'integer', minimum: 0 } }, required: ['n'] })
 * schema({ n: 3 }) // { n: 3 }
 */
export function fromJsonSchema(json: JsonSchema | boolean, options: FromJsonSchemaOptions = {}): Schema {
  return new Converter(json, !(options.nullAsAbsent ?? true), options.onLoosen).convert(json, '$')
}
