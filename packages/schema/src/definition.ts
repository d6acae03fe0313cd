import type Schema from 'schemastery'
import { SchemaError } from './errors'
import { isSchema } from './is-schema'

// The meta field that carries a definition's name. schemastery keeps unknown meta fields
// through its modifiers and its own `toJSON()`, and ignores them when it validates.
const META_KEY = 'definition'

// A name that is its own JSON pointer segment and URI fragment: no escaping, no surprises.
const NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/

/**
 * Names a schema as a shared definition. `toJsonSchema` puts it once in the top-level
 * `$defs` under this name and writes `{ $ref: '#/$defs/<name>' }` wherever it is used;
 * `fromJsonSchema` names what it reads from `$defs` the same way, so the name survives a
 * round trip. Validation does not change. Copies made by modifiers keep the name:
 * `address.description('Home')` is the same definition with its own description beside the
 * `$ref`, while a copy that accepts other values (`address.min(1)`) is an error at conversion.
 *
 * @throws {SchemaError} `INVALID_NAME` unless the name is a letter or `_`, then letters,
 * digits, `_`, `.` or `-`, 64 characters at most; `INVALID_SCHEMA` for something that is not a schema.
 * @example
 * const address = definition('address', Schema.object({ street: String, city: String }))
 * toJsonSchema(Schema.object({ home: address, work: address }))
 * // { …, properties: { home: { anyOf: [{ $ref: '#/$defs/address' }, { type: 'null' }] }, … },
 * //   $defs: { address: { type: 'object', properties: { street: …, city: … } } } }
 */
export function definition<S extends Schema>(name: string, schema: S): S {
  checkName(name, '$')
  if (!isSchema(schema)) throw new SchemaError('INVALID_SCHEMA', '$', 'definition() names a schemastery schema')
  return schema.extra(META_KEY as never, name as never) as S
}

/** The definition name a schema carries, if any. @throws {SchemaError} `INVALID_NAME` for a malformed one. */
export function definitionName(schema: Schema, path: string): string | undefined {
  const name = (schema.meta as Record<string, unknown>)[META_KEY]
  if (name === undefined) return
  checkName(name, path)
  return name
}

/** The well-formed definition name a schema carries, if any; never throws. */
export function givenName(schema: Schema): string | undefined {
  const name = (schema.meta as Record<string, unknown>)[META_KEY]
  return isDefinitionName(name) ? name : undefined
}

/** The schema without a definition name (a copy when it has one). */
export function withoutDefinition<S extends Schema>(schema: S): S {
  return (schema.meta as Record<string, unknown>)[META_KEY] === undefined ? schema : schema.extra(META_KEY as never, undefined as never) as S
}

/** Whether `name` may name a definition (the same rule {@link definition} applies). */
export function isDefinitionName(name: unknown): name is string {
  return typeof name === 'string' && NAME.test(name)
}

function checkName(name: unknown, path: string): asserts name is string {
  if (isDefinitionName(name)) return
  throw new SchemaError('INVALID_NAME', path,
    `a definition name must be a letter or _, then letters, digits, _ . or -, 64 at most; got ${JSON.stringify(name)}`)
}
