import Schema from 'schemastery'
import { withoutDefinition } from './definition'
import { SchemaError } from './errors'
import { isSchema } from './is-schema'
import { otherKeysPattern } from './key-patterns'
import { checkLinearly } from './linear-pattern'

/**
 * A closed object: the same object schema, refusing every key it does not declare.
 * schemastery keeps unknown keys (and drops them in strict mode); this is the schemastery
 * form that refuses them, so `schema(value)`, `compileValidator` and `toJsonSchema`
 * (`additionalProperties: false`) agree. It is what `fromJsonSchema` makes of
 * `additionalProperties: false`: an intersect of the object with a dict whose values are
 * `never` over the keys the object does not declare. The object's description, flags,
 * definition name and non-empty default move to the intersect, where converters and forms read them.
 *
 * @throws {SchemaError} `INVALID_SCHEMA` for anything but a `Schema.object(…)`.
 * @example
 * const args = closed(Schema.object({ path: Schema.string().required() }))
 * args({ path: 'a', mode: 1 }) // throws: $.mode expected nullable but got 1
 * toJsonSchema(args) // { …, type: 'object', properties: { path: … }, required: ['path'], additionalProperties: false }
 */
export function closed<S, T>(object: Schema<S, T>): Schema<S, T> {
  if (!isSchema(object) || object.type !== 'object') {
    throw new SchemaError('INVALID_SCHEMA', '$', `closed() takes a Schema.object(…), got ${isSchema(object) ? `Schema<${object.type}>` : typeof object}`)
  }
  const declared = Object.keys(object.dict!)
  const keys = new Set(declared)
  // schemastery runs the lookahead pattern; Dogu's validator checks the key set instead
  const others = checkLinearly(Schema.string().pattern(new RegExp(otherKeysPattern(declared, []), 'u')), (key) => !keys.has(key))
  const refusal = Schema.dict(Schema.never().required(), others).default(undefined as never)
  const { default: fallback, ...meta } = object.meta as Schemastery.Meta
  // a definition name names the closed object; the part inside must not claim it too
  const result: Schema = Schema.intersect([withoutDefinition(object), refusal])
  // an empty default is schemastery's own; the object part still applies it
  const own = fallback !== undefined && !(fallback && typeof fallback === 'object' && !Object.keys(fallback).length)
  result.meta = own ? { ...meta, default: fallback } : meta
  return result as unknown as Schema<S, T>
}
