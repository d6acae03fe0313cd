import type Schema from 'schemastery'

const kSchema = Symbol.for('schemastery')

/** True for a schemastery schema (of any copy of the library: the brand is a global symbol). */
export function isSchema(value: unknown): value is Schema {
  return typeof value === 'function' && !!(value as any)[kSchema]
}
