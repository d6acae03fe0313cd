import { mapChildren } from './dialects/walk'
import type { JsonSchema } from './json-schema'
import { isPlain } from './json-value'
import { mayAcceptNull, removeNull } from './nullable'

/**
 * A copy of a `toJsonSchema` document in which no optional property admits `null` for
 * "absent": `days: { type: 'integer', minimum: 0 }` instead of `type: ['integer', 'null']`,
 * still left out of `required`. The 2020-12 output admits that null only because
 * schemastery reads it as a missing value; a client that leaves the property out needs no
 * null, and tools such as MCP Inspector's `--strict` warn about it. This is what Dogu's MCP
 * server lists in `tools/list`. What validates a call is unchanged: the tool's schemastery
 * schema still takes `null` there.
 *
 * Only properties are narrowed (array items and dict values keep their null), at every
 * depth; a property whose schema takes nothing but null (`{ type: 'null' }`), or any value
 * (`{}`), stays as it is, and so does what sits under `not`.
 *
 * @example
 * withoutAbsentNull(toJsonSchema(Schema.object({ city: Schema.string().required(), days: Schema.natural() })))
 * // { $schema: '…/2020-12/schema', type: 'object',
 * //   properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 0 } }, required: ['city'] }
 */
export function withoutAbsentNull(schema: JsonSchema): JsonSchema {
  return narrow(schema, '$')
}

function narrow(schema: JsonSchema, path: string): JsonSchema {
  // `not` and `propertyNames` say what is refused, or what keys are: nothing there is a property that may be left out
  const { not, propertyNames, ...rest } = schema
  const result = mapChildren(rest, path, narrow)
  if (not !== undefined) result.not = not
  if (propertyNames !== undefined) result.propertyNames = propertyNames
  if (!isPlain(result.properties)) return result
  const required = new Set(Array.isArray(result.required) ? result.required : [])
  const properties: JsonSchema = {}
  for (const [key, value] of Object.entries(result.properties as Record<string, JsonSchema>)) {
    const narrowed = required.has(key) || !explicitNull(value) ? value : removeNull(value) ?? value
    // defineProperty, so that a property named __proto__ stays a property
    Object.defineProperty(properties, key, { value: narrowed, enumerable: true, writable: true, configurable: true })
  }
  result.properties = properties
  return result
}

// A null the schema states (a type, an enum, a branch), not the null of a schema open to anything.
function explicitNull(schema: JsonSchema): boolean {
  const stated = schema.type !== undefined || Array.isArray(schema.enum) || 'const' in schema || Array.isArray(schema.anyOf)
  return stated && mayAcceptNull(schema)
}
