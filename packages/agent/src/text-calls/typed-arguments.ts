import type { TextToolSchema } from './markup-reader'

// Values written as text (`qwen3-coder`'s `<parameter=…>`, GLM's `<arg_value>`) are strings;
// the tool's schema (as sent to the model) says which are numbers, booleans, null, objects or
// arrays, as the servers' own parsers read them. A value that cannot take the schema's type
// stays the string the model wrote, so the validator refuses it with its path: never a guess.

type Parameters = TextToolSchema['parameters']
type Kind = 'string' | 'number' | 'boolean' | 'null' | 'object' | 'array'

/** JSON's number grammar: `+5`, `.5`, `0x1F`, `1,000` and `NaN` are not numbers here. */
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/
/** JSON's literals, and Python's spelling of them (the models learned both). */
const LITERALS: ReadonlyMap<string, 'true' | 'false' | 'null'> = new Map([
  ['true', 'true'], ['false', 'false'], ['null', 'null'],
  ['True', 'true'], ['False', 'false'], ['None', 'null'],
])
const KINDS: ReadonlyMap<string, Kind> = new Map([
  ['string', 'string'], ['number', 'number'], ['integer', 'number'], ['boolean', 'boolean'],
  ['null', 'null'], ['object', 'object'], ['array', 'array'],
])
/** How deep `$ref`s and combinators are followed: schemas that refer to themselves end there. */
const MAX_DEPTH = 16

/**
 * The arguments' JSON text from the key and value texts a model wrote, in its order (a key
 * given twice stays twice, for the pipeline to refuse as ambiguous). Each value has one
 * leading and one trailing newline trimmed (the markup's own line breaks), then is typed by
 * the tool's schema for that key: a string where the schema allows one, else null, a boolean,
 * a number, or an object or array written as JSON; anything else stays a string.
 */
export function typedArguments(pairs: readonly (readonly [string, string])[], parameters: Parameters): string {
  const members = pairs.map(([key, raw]) => `${JSON.stringify(key)}:${typedValue(valueText(raw), kindsOf(propertySchema(parameters, key), parameters, 0))}`)
  return `{${members.join(',')}}`
}

/** The value without the line breaks the markup puts around it: one at each end, no more. */
function valueText(raw: string): string {
  return raw.replace(/^\r?\n/, '').replace(/\r?\n$/, '')
}

function typedValue(text: string, kinds: ReadonlySet<Kind> | 'any'): string {
  // No schema, or one that takes anything: the model wrote text.
  if (kinds === 'any') return JSON.stringify(text)
  const trimmed = text.trim()
  const literal = LITERALS.get(trimmed)
  if (literal === 'null' && kinds.has('null')) return 'null'
  if (kinds.has('string')) return JSON.stringify(text)
  if ((literal === 'true' || literal === 'false') && kinds.has('boolean')) return literal
  if (kinds.has('number') && NUMBER.test(trimmed)) return trimmed
  if (kinds.has('object') && trimmed.startsWith('{') && parsesTo(trimmed, 'object')) return trimmed
  if (kinds.has('array') && trimmed.startsWith('[') && parsesTo(trimmed, 'array')) return trimmed
  return JSON.stringify(text)
}

function parsesTo(text: string, kind: 'object' | 'array'): boolean {
  try {
    const value: unknown = JSON.parse(text)
    return kind === 'array' ? Array.isArray(value) : value !== null && typeof value === 'object' && !Array.isArray(value)
  } catch {
    return false
  }
}

function propertySchema(parameters: Parameters, key: string): unknown {
  const properties = parameters?.properties
  if (isObject(properties) && Object.hasOwn(properties, key)) return properties[key]
  const additional = parameters?.additionalProperties
  return isObject(additional) ? additional : undefined
}

/** The JSON types a schema admits, or `any` when it does not say (no schema, `{}`, an unresolved `$ref`). */
function kindsOf(schema: unknown, root: Parameters, depth: number): ReadonlySet<Kind> | 'any' {
  if (!isObject(schema) || depth > MAX_DEPTH) return 'any'
  if (typeof schema.$ref === 'string') return kindsOf(resolve(schema.$ref, root), root, depth + 1)
  const kinds = new Set<Kind>()
  const types = typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) ? schema.type : []
  for (const type of types) {
    const kind = typeof type === 'string' ? KINDS.get(type) : undefined
    if (kind) kinds.add(kind)
  }
  const values = 'const' in schema ? [schema.const] : Array.isArray(schema.enum) ? schema.enum : []
  for (const value of values) kinds.add(kindOfValue(value))
  for (const keyword of ['anyOf', 'oneOf', 'allOf'] as const) {
    const members = schema[keyword]
    if (!Array.isArray(members)) continue
    for (const member of members) {
      const inner = kindsOf(member, root, depth + 1)
      if (inner === 'any') {
        if (keyword !== 'allOf') return 'any'
      } else {
        for (const kind of inner) kinds.add(kind)
      }
    }
  }
  return kinds.size ? kinds : 'any'
}

function kindOfValue(value: unknown): Kind {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  const type = typeof value
  return type === 'string' || type === 'number' || type === 'boolean' ? type : 'object'
}

/** A local `$ref` (`#/$defs/Name`, `#/definitions/Name`, any JSON pointer into the parameters). */
function resolve(ref: string, root: Parameters): unknown {
  if (!ref.startsWith('#')) return undefined
  let node: unknown = root
  for (const segment of ref.slice(1).split('/').slice(1)) {
    const key = segment.replace(/~1/g, '/').replace(/~0/g, '~')
    if (!isObject(node) || !Object.hasOwn(node, key)) return undefined
    node = node[key]
  }
  return node
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}
