import type { JsonSchema } from '../json-schema'
import { isPlain } from '../json-value'
import { splitAnnotations, toArray } from '../nullable'

// Deep enough to say what a field holds, short enough for a description or a WebUI line.
const MAX_DEPTH = 2
const MAX_LISTED = 8

/**
 * A short English account of what a schema accepts, for loosening rules and for the
 * description of an encoded field: `an object with keys a (required), b`, `one of "x", "y"`.
 */
export function describeSchema(schema: unknown, depth = 0): string {
  if (schema === true) return 'any JSON value'
  if (schema === false || !isPlain(schema)) return 'no value at all'
  const [, assertions] = splitAnnotations(schema)
  const { $defs: _, ...rest } = assertions
  const keys = Object.keys(rest)
  if (!keys.length) return 'any JSON value'
  if (keys.length === 1 && isPlain(rest.not)) {
    const not = rest.not
    if (!Object.keys(not).length) return 'no value at all'
    if (not.type === 'null') return 'any JSON value but null'
  }
  if (typeof rest.$ref === 'string') return refName(rest.$ref)
  if ('const' in rest) return JSON.stringify(rest.const)
  if (Array.isArray(rest.enum)) return oneOf(rest.enum)
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(rest[key])) return unique((rest[key] as unknown[]).map((branch) => describeSchema(branch, depth))).join(' or ')
  }
  if (Array.isArray(rest.allOf)) return unique((rest.allOf as unknown[]).map((part) => describeSchema(part, depth))).join(' and ')
  const types = rest.type === undefined ? [] : toArray(rest.type) as string[]
  if (!types.length) return 'a value with constraints'
  return unique(types.map((type) => describeType(type, rest, depth))).join(' or ')
}

function describeType(type: string, schema: JsonSchema, depth: number): string {
  switch (type) {
    case 'string': return 'a string' + suffix([
      schema.format !== undefined && `in ${schema.format} format`,
      schema.pattern !== undefined && `matching /${schema.pattern}/`,
      schema.minLength !== undefined && `of at least ${schema.minLength} characters`,
      schema.maxLength !== undefined && `of at most ${schema.maxLength} characters`,
    ])
    case 'number': case 'integer': return (type === 'integer' ? 'an integer' : 'a number') + suffix([
      schema.minimum !== undefined && `at least ${schema.minimum}`,
      schema.exclusiveMinimum !== undefined && `greater than ${schema.exclusiveMinimum}`,
      schema.maximum !== undefined && `at most ${schema.maximum}`,
      schema.exclusiveMaximum !== undefined && `less than ${schema.exclusiveMaximum}`,
      schema.multipleOf !== undefined && `a multiple of ${schema.multipleOf}`,
    ])
    case 'boolean': return 'a boolean'
    case 'null': return 'null'
    case 'array': return describeArray(schema, depth)
    case 'object': return describeObject(schema, depth)
    default: return `a ${type}`
  }
}

function describeArray(schema: JsonSchema, depth: number): string {
  const bounds = suffix([
    schema.minItems !== undefined && `at least ${schema.minItems} items`,
    schema.maxItems !== undefined && `at most ${schema.maxItems} items`,
  ])
  if (depth >= MAX_DEPTH) return 'an array' + bounds
  if (Array.isArray(schema.prefixItems)) {
    return `an array [${schema.prefixItems.map((item) => describeSchema(item, depth + 1)).join(', ')}]` + bounds
  }
  if (schema.items === undefined) return 'an array' + bounds
  return `an array${bounds}, each item ${describeSchema(schema.items, depth + 1)}`
}

function describeObject(schema: JsonSchema, depth: number): string {
  if (depth >= MAX_DEPTH) return 'an object'
  const properties = Object.keys(isPlain(schema.properties) ? schema.properties : {})
  const required = new Set(Array.isArray(schema.required) ? schema.required : [])
  const parts: string[] = []
  if (properties.length) {
    const listed = properties.slice(0, MAX_LISTED).map((key) => required.has(key) ? `${key} (required)` : key)
    parts.push(`keys ${listed.join(', ')}${properties.length > MAX_LISTED ? ', …' : ''}`)
  }
  if (isPlain(schema.patternProperties)) {
    for (const [pattern, value] of Object.entries(schema.patternProperties)) {
      parts.push(`keys matching /${pattern}/, each value ${describeSchema(value, depth + 1)}`)
    }
  }
  const extra = schema.additionalProperties
  if (extra !== undefined && extra !== false) {
    const names = isPlain(schema.propertyNames) ? describeSchema(schema.propertyNames, depth + 1).replace(/^a string ?/, '') : ''
    const which = parts.length ? 'other keys' : names ? `keys ${names}` : 'any keys'
    parts.push(`${which}, each value ${describeSchema(extra, depth + 1)}`)
  }
  return parts.length ? `an object with ${parts.join('; ')}` : 'an object'
}

/** What a dict (or an object with key patterns) says about its keys: `keys are any string, values a string (a dict)`. */
export function describeDict(schema: JsonSchema): string {
  const names = isPlain(schema.propertyNames) ? describeSchema(schema.propertyNames).replace(/^a string ?/, 'strings ').trim() : 'any string'
  const rules: string[] = []
  if (isPlain(schema.patternProperties)) {
    for (const [pattern, value] of Object.entries(schema.patternProperties)) rules.push(`keys matching /${pattern}/ have values ${describeSchema(value)}`)
  }
  if (isPlain(schema.additionalProperties)) {
    const which = isPlain(schema.properties) && Object.keys(schema.properties).length ? 'other keys are' : 'keys are'
    rules.push(`${which} ${names}, values ${describeSchema(schema.additionalProperties)}`)
  }
  return `${rules.join('; ')} (a dict)`
}

function refName(ref: string) {
  if (ref === '#') return 'the whole arguments object (recursive)'
  // a definition may be recursive or only shared (`definition()`); its name is all there is to say
  const name = ref.split('/').pop()!
  return `a ${name} (a shared definition)`
}

function oneOf(values: unknown[]) {
  const shown = values.slice(0, MAX_LISTED).map((value) => JSON.stringify(value))
  if (values.length > MAX_LISTED) shown.push('…')
  return values.length === 1 ? shown[0]! : `one of ${shown.join(', ')}`
}

function suffix(parts: (string | false)[]) {
  const present = parts.filter(Boolean)
  return present.length ? ` ${present.join(', ')}` : ''
}

function unique(items: string[]) {
  return [...new Set(items)]
}
