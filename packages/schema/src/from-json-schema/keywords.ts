import type { JsonSchema } from '../json-schema'
import { ANNOTATIONS } from '../nullable'

export type Json = JsonSchema | boolean

// Keywords that only annotate, plus containers read through `$ref`; they never change a verdict.
export const annotations = new Set([
  ...ANNOTATIONS,
  '$schema', '$id', '$defs', 'definitions', '$anchor', '$dynamicAnchor', '$vocabulary',
  'format', 'contentEncoding', 'contentMediaType', 'contentSchema',
])

// Keywords schemastery cannot express; anything else unknown is ignored, as JSON Schema says.
export const refused = new Set([
  'if', 'then', 'else', 'dependentRequired', 'dependentSchemas', 'dependencies',
  'unevaluatedProperties', 'unevaluatedItems', 'contains', 'minContains', 'maxContains', 'uniqueItems',
  'minProperties', 'maxProperties', '$dynamicRef', '$recursiveRef', '$recursiveAnchor',
])

// Meta-schemas whose vocabularies are the standard ones; a custom one may switch validation off.
export const standardDialects = new Set([
  'https://json-schema.org/draft/2020-12/schema', 'https://json-schema.org/draft/2019-09/schema',
  'http://json-schema.org/draft-07/schema#', 'http://json-schema.org/draft-07/schema',
])

// Keywords that apply to one JSON type each (string, number, object, array).
export const typeKeywords = [
  'minLength', 'maxLength', 'pattern',
  'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
  'properties', 'required', 'additionalProperties', 'patternProperties', 'propertyNames',
  'items', 'prefixItems', 'minItems', 'maxItems',
]

/** `not: { type: 'null' }` (anything but null, as Dogu writes a required `any`) and `not: {}` (nothing). */
export function notKind(json: JsonSchema): 'null' | 'all' | undefined {
  if (!('not' in json)) return
  const not = json.not
  if (not === true || (isPlainObject(not) && !Object.keys(not).some((key) => !annotations.has(key)))) return 'all'
  if (isPlainObject(not) && not.type === 'null' && !Object.keys(not).some((key) => key !== 'type' && !annotations.has(key))) return 'null'
}

function isPlainObject(value: unknown): value is JsonSchema {
  return !!value && typeof value === 'object' && !Array.isArray(value)
}

export const jsonTypes = ['null', 'boolean', 'object', 'array', 'number', 'string'] as const
export type JsonType = typeof jsonTypes[number]
