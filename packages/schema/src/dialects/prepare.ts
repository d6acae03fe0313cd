import type { Dialect, JsonSchema } from '../json-schema'
import { isPlain, jsonEqual } from '../json-value'
import { mayAcceptNull, removeNull, splitAnnotations, toArray } from '../nullable'
import { dereferencer } from './deref'
import { describeSchema } from './describe'
import { flattenObject } from './flatten'
import { limitsOf } from './limits'
import type { Loosenings } from './loosening'
import { mergeAllOf } from './merge-all-of'
import { mapChildren, refuse } from './walk'

// The keywords of JSON Schema 2020-12; any other is an annotation, which no provider needs.
const KEYWORDS = new Set([
  '$id', '$ref', '$defs', '$anchor', '$dynamicRef', '$dynamicAnchor', '$comment', '$vocabulary',
  'allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else', 'dependentSchemas', 'prefixItems', 'items', 'contains',
  'properties', 'patternProperties', 'additionalProperties', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties',
  'type', 'enum', 'const', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum',
  'maxLength', 'minLength', 'pattern', 'maxItems', 'minItems', 'uniqueItems', 'maxContains', 'minContains',
  'maxProperties', 'minProperties', 'required', 'dependentRequired',
  'title', 'description', 'default', 'deprecated', 'readOnly', 'writeOnly', 'examples',
  'format', 'contentEncoding', 'contentMediaType', 'contentSchema',
])

/**
 * The steps every provider dialect shares: copy; drop `$schema` and keywords JSON Schema does
 * not define (annotations to it); merge intersections where that is exact; narrow what our
 * 2020-12 output widens only to mirror schemastery's leniency (items, dict values and optional
 * properties also admit `null` there, because schemastery treats null as "absent"; a provider
 * should rather be told to omit the value); and make the root one object (a union or an
 * intersection there is flattened, see `flattenObject`).
 *
 * @throws {SchemaError} `DIALECT_REFUSED` when the input is not a schema object.
 */
export function prepare(input: JsonSchema, dialect: Dialect, notes: Loosenings): JsonSchema {
  if (!isPlain(input)) refuse('$', `expected a JSON Schema object, got ${JSON.stringify(input)}`)
  const { $schema: _, $id: __, ...rest } = structuredClone(input)
  const root = narrow(rest, '$')
  return limitsOf(dialect).rootObject ? objectRoot(root, notes) : root
}

function narrow(input: JsonSchema, path: string): JsonSchema {
  const known = Object.fromEntries(Object.entries(input).filter(([key]) => KEYWORDS.has(key)))
  const schema = mergeAllOf(mapChildren(known, path, narrow))
  if (isPlain(schema.items)) schema.items = withoutNull(schema.items)
  if (Array.isArray(schema.prefixItems)) schema.prefixItems = schema.prefixItems.map(withoutNull)
  if (isPlain(schema.additionalProperties)) schema.additionalProperties = withoutNull(schema.additionalProperties)
  const objectTyped = schema.type === undefined || toArray(schema.type).includes('object')
  if (objectTyped && Array.isArray(schema.required) && schema.required.some((key) => !isPlain(schema.properties) || !Object.hasOwn(schema.properties, key))) {
    // a required key without a property schema may hold anything; saying so keeps `required` within `properties`, as providers want
    const properties: JsonSchema = { ...isPlain(schema.properties) ? schema.properties : {} }
    for (const key of schema.required as string[]) {
      if (!Object.hasOwn(properties, key)) Object.defineProperty(properties, key, { value: {}, enumerable: true, writable: true, configurable: true })
    }
    schema.properties = properties
  }
  if (isPlain(schema.properties)) {
    const required = new Set(Array.isArray(schema.required) ? schema.required : [])
    const properties: JsonSchema = {}
    for (const [key, value] of Object.entries(schema.properties)) {
      const narrowed = required.has(key) ? value : withoutNull(value as JsonSchema)
      Object.defineProperty(properties, key, { value: narrowed, enumerable: true, writable: true, configurable: true })
    }
    schema.properties = properties
  }
  return schema
}

// Only an explicit null is taken out; an open schema (`{}`) stays open rather than growing a `not`.
function withoutNull(schema: JsonSchema): JsonSchema {
  const explicit = schema.type !== undefined || Array.isArray(schema.enum) || 'const' in schema || Array.isArray(schema.anyOf)
  if (!explicit || !mayAcceptNull(schema)) return schema
  return removeNull(schema) ?? schema
}

/**
 * The root as one object: as it is; flattened (a superset, recorded); or, when no object form
 * says what it takes, an object with any keys (`additionalProperties: {}`), recorded unless
 * the root takes any object anyway: tool arguments are always an object.
 */
function objectRoot(root: JsonSchema, notes: Loosenings): JsonSchema {
  const { $defs, ...body } = root
  const withDefs = (schema: JsonSchema) => $defs === undefined ? schema : { ...schema, $defs }
  const [annotations, assertions] = splitAnnotations(body)
  const combined = ['anyOf', 'oneOf', 'allOf'].some((key) => key in assertions)
  if (assertions.type === 'object' && !combined) return root
  const flat = flattenObject(body, '$', { notes, deref: dereferencer(root) }, true)
  if (flat) return withDefs(flat)
  const { not, type, ...others } = assertions
  const open = (not === undefined || jsonEqual(not, { type: 'null' })) && (type === undefined || toArray(type).includes('object'))
  if (!open || Object.keys(others).length) notes.loosen('$', `the arguments are ${describeSchema(body)}`)
  return withDefs({ type: 'object', additionalProperties: {}, ...annotations })
}
