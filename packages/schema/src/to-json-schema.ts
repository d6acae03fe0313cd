import type Schema from 'schemastery'
import { SchemaError } from './errors'
import type { JsonSchema } from './json-schema'
import { combinatorConverters } from './to-json-schema/combinators'
import { isSchema } from './is-schema'
import { Context, type Converter } from './to-json-schema/context'
import { scalarConverters } from './to-json-schema/scalars'
import { structureConverters } from './to-json-schema/structures'

/** The dialect identifier written as `$schema` at the top of every document. */
export const JSON_SCHEMA_DRAFT = 'https://json-schema.org/draft/2020-12/schema'

/** Options of {@link toJsonSchema}. */
export interface ToJsonSchemaOptions {
  /**
   * Locale for i18n descriptions (`Schema.string().i18n({ zh: '…', en: '…' })`).
   * Falls back to the locale's language (`en-GB` → `en`), the language's main locale (`en` →
   * `en-US`, `zh` → `zh-CN`), any other locale of that language, then `''`, `en`, `en-US`,
   * `zh`, `zh-CN`, then the first text (docs/schema-conversion.md lists the order).
   * @example 'zh-CN'
   */
  locale?: string
}

// One converter per schemastery type; `lazy` is resolved by the context itself.
const converters: Record<string, Converter> = {
  ...scalarConverters,
  ...structureConverters,
  ...combinatorConverters,
}

/**
 * Converts a schemastery schema to a JSON Schema 2020-12 document that accepts and rejects
 * the same JSON values as `schema(value)` does (see docs/schema-conversion.md for the few
 * checks JSON Schema cannot make). The document names its dialect in `$schema`;
 * recursive schemas put their shared parts in a top-level `$defs`.
 *
 * @throws {SchemaError} `UNSUPPORTED_TYPE` for `Schema.function()` and `Schema.is()`,
 * `UNSUPPORTED_CONSTRAINT` for a pattern flag or step JSON Schema cannot carry; `path` names the spot.
 * @example
 * toJsonSchema(Schema.object({ env: Schema.union(['staging', 'prod']).required() }))
 * // { $schema: '…/2020-12/schema', type: 'object',
 * //   properties: { env: { type: 'string', enum: ['staging', 'prod'] } }, required: ['env'] }
 */
export function toJsonSchema(schema: Schema, options: ToJsonSchemaOptions = {}): JsonSchema {
  if (!isSchema(schema)) throw new SchemaError('INVALID_SCHEMA', '$', 'expected a schemastery schema')
  const ctx = new Context(converters, schema, options.locale)
  // The root is the value that was sent: schemastery would turn a nullish root into its
  // default, but tool arguments are always an object, so the root does not admit null.
  const body = ctx.node(schema, '$', false)
  const result: JsonSchema = { $schema: JSON_SCHEMA_DRAFT, ...body }
  if (Object.keys(ctx.defs).length) result.$defs = ctx.defs
  return result
}
