import type { Dialect, JsonSchema } from './json-schema'
import { toAnthropic } from './dialects/anthropic'
import { toGemini } from './dialects/gemini'
import { limitsOf } from './dialects/limits'
import { toOpenAI } from './dialects/openai'

export { checkToolName, DIALECT_LIMITS, type DialectLimits } from './dialects/limits'

const DIALECTS: Record<Dialect, (schema: JsonSchema) => JsonSchema> = {
  json: schema => structuredClone(schema),
  openai: toOpenAI,
  anthropic: toAnthropic,
  gemini: toGemini,
}

/**
 * Rewrites a JSON Schema 2020-12 document (as {@link toJsonSchema} makes) for a provider's
 * tool parameters. The input is not changed. What the provider ignores or forbids but the
 * runtime still checks (string lengths, defaults, …) is dropped; what changes the shape of a
 * value (tuples, maps, recursion, unions where they are not allowed) is refused.
 * See docs/schema-conversion.md for the table.
 *
 * - `json`: a copy, unchanged.
 * - `openai`: strict mode — every property required, optional ones nullable, every object closed.
 * - `anthropic`: an object at the root; otherwise 2020-12.
 * - `gemini`: the OpenAPI subset — no `$ref`/`anyOf`/`additionalProperties`/`const`, string enums, `nullable`.
 *
 * @throws {SchemaError} `DIALECT_REFUSED` naming the path (`$.options.mode`).
 * @example toDialect(toJsonSchema(Schema.object({ q: Schema.string() })), 'openai')
 * // { type: 'object', properties: { q: { type: ['string', 'null'] } }, required: ['q'], additionalProperties: false }
 */
export function toDialect(schema: JsonSchema, dialect: Dialect): JsonSchema {
  limitsOf(dialect)
  return DIALECTS[dialect](schema)
}
