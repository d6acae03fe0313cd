import type { Dialect, JsonSchema } from './json-schema'
import { toAnthropic } from './dialects/anthropic'
import { toGemini } from './dialects/gemini'
import { limitsOf } from './dialects/limits'
import type { DialectConversion } from './dialects/loosening'
import { toOpenAI } from './dialects/openai'

export { checkToolName, DIALECT_LIMITS, type DialectLimits } from './dialects/limits'
export type { DialectConversion, Loosening } from './dialects/loosening'

const DIALECTS: Record<Dialect, (schema: JsonSchema) => DialectConversion> = {
  json: schema => ({ schema: structuredClone(schema), loosened: [], encoded: [] }),
  openai: toOpenAI,
  anthropic: toAnthropic,
  gemini: toGemini,
}

/**
 * Rewrites a JSON Schema 2020-12 document (as {@link toJsonSchema} makes) for a provider's
 * tool parameters, and says what the provider's form gives up. The input is not changed.
 * Every schema converts: where the provider cannot state a rule, the output accepts more
 * (recorded in `loosened`; Dogu's validator keeps the exact rule at call time), and where no
 * form accepts the values as they are, they travel as JSON-encoded strings (`encoded`; decode
 * them with {@link decodeEncoded}). See docs/schema-conversion.md for each dialect.
 *
 * - `json`: a copy, unchanged.
 * - `openai`: strict mode (every property required, optional ones nullable, every object
 *   closed) when it can state the schema; otherwise `strict: false` and plain JSON Schema.
 * - `anthropic`: 2020-12 with one object at the root.
 * - `gemini`: the OpenAPI subset (string enums, `nullable`); dicts, `any`, unions of kinds and
 *   deep recursion travel JSON-encoded.
 *
 * @throws {SchemaError} `DIALECT_REFUSED` (path `$`) for an unknown dialect or a schema that is not an object.
 * @example convertToDialect(toJsonSchema(Schema.object({ headers: Schema.dict(String) })), 'gemini')
 * // { schema: { type: 'object', properties: { headers: { type: 'string', description: '(JSON-encoded string of …)' } }, propertyOrdering: ['headers'] },
 * //   loosened: [{ path: '$.headers', rule: 'sent as a JSON-encoded string of …' }], encoded: ['$.headers'] }
 */
export function convertToDialect(schema: JsonSchema, dialect: Dialect): DialectConversion {
  limitsOf(dialect)
  return DIALECTS[dialect](schema)
}

/**
 * The provider's tool parameters alone: `convertToDialect(schema, dialect).schema`.
 * @throws {SchemaError} `DIALECT_REFUSED` (path `$`) for an unknown dialect or a schema that is not an object.
 * @example toDialect(toJsonSchema(Schema.object({ q: Schema.string() })), 'openai')
 * // { type: 'object', properties: { q: { type: ['string', 'null'] } }, required: ['q'], additionalProperties: false }
 */
export function toDialect(schema: JsonSchema, dialect: Dialect): JsonSchema {
  return convertToDialect(schema, dialect).schema
}
