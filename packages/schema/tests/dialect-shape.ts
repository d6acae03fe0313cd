import Ajv2020 from 'ajv/dist/2020'
import type { DialectConversion, JsonSchema } from '../src'

// Test-side helpers for the dialect proofs: a value written as schemastery takes it, put in
// the shape a provider's model sends (encoded fields as JSON text, OpenAI strict mode's null
// for every absent key), and the checks a provider schema gets here. Written apart from the
// source on purpose: `encodeAt` is the inverse `decodeEncoded` must undo.

type Segment = { key: string } | { index: number } | { each: 'item' | 'value' }

/** `$.a["b c"][*].*[0]` as segments (the grammar `convertToDialect` writes). */
export function segmentsOf(path: string): Segment[] {
  const segments: Segment[] = []
  const token = /\.([A-Za-z_$][\w$]*)|\.\*|\[\*\]|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/y
  token.lastIndex = 1
  while (token.lastIndex < path.length) {
    const match = token.exec(path)
    if (!match) throw new Error(`cannot read ${path}`)
    if (match[1] !== undefined) segments.push({ key: match[1] })
    else if (match[2] !== undefined) segments.push({ index: Number(match[2]) })
    else if (match[3] !== undefined) segments.push({ key: JSON.parse(match[3]) })
    else segments.push({ each: match[0] === '.*' ? 'value' : 'item' })
  }
  return segments
}

/** A copy of `value` with what `path` reaches replaced by its JSON text. */
export function encodeAt(value: unknown, path: string): unknown {
  const walk = (node: unknown, segments: Segment[]): unknown => {
    if (node === null || node === undefined) return node
    if (!segments.length) return JSON.stringify(node)
    const [segment, ...rest] = segments
    if ('key' in segment!) {
      if (!isObject(node) || !Object.hasOwn(node, segment.key)) return node
      return { ...node, [segment.key]: walk(node[segment.key], rest) }
    }
    if ('index' in segment!) {
      if (!Array.isArray(node)) return node
      return node.map((item, i) => i === segment.index ? walk(item, rest) : item)
    }
    if (segment!.each === 'item') return Array.isArray(node) ? node.map(item => walk(item, rest)) : node
    return isObject(node) ? Object.fromEntries(Object.entries(node).map(([key, item]) => [key, walk(item, rest)])) : node
  }
  return walk(value, segmentsOf(path))
}

/** `value` as the provider's model sends it under `conversion`. */
export function dialectShape(value: unknown, conversion: DialectConversion): unknown {
  let shaped = value
  for (const path of conversion.encoded) shaped = encodeAt(shaped, path)
  if (conversion.strict) shaped = fillNulls(shaped, conversion.schema, conversion.schema)
  return shaped
}

// OpenAI strict mode requires every key: a model says "absent" with null.
function fillNulls(value: unknown, input: JsonSchema, root: JsonSchema): unknown {
  const schema = deref(input, root)
  if (Array.isArray(schema.anyOf)) {
    const branch = (schema.anyOf as JsonSchema[]).find(candidate => fits(value, deref(candidate, root)))
    return branch ? fillNulls(value, branch, root) : value
  }
  if (isObject(value) && isObject(schema.properties)) {
    const result: Record<string, unknown> = {}
    for (const [key, inner] of Object.entries(schema.properties as Record<string, JsonSchema>)) {
      result[key] = key in value ? fillNulls(value[key], inner, root) : null
    }
    // a key the schema does not declare stays: strict mode would refuse it, the pipeline must too
    for (const key of Object.keys(value)) if (!Object.hasOwn(result, key)) result[key] = value[key]
    return result
  }
  if (Array.isArray(value) && isObject(schema.items)) return value.map(item => fillNulls(item, schema.items as JsonSchema, root))
  return value
}

// The union branch a value was written for: its JSON type, and for objects its keys and constants.
function fits(value: unknown, schema: JsonSchema): boolean {
  const types = schema.type === undefined ? [] : [schema.type].flat() as string[]
  const kind = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value === 'number' ? (Number.isInteger(value) ? 'integer' : 'number') : typeof value
  if (types.length && !types.includes(kind) && !(kind === 'integer' && types.includes('number'))) return false
  if (!isObject(value) || !isObject(schema.properties)) return true
  const properties = schema.properties as Record<string, JsonSchema>
  return Object.keys(value).every(key => Object.hasOwn(properties, key)) && Object.entries(properties).every(([key, inner]) => {
    if (!(key in value)) return true
    const listed = 'const' in inner ? [inner.const] : Array.isArray(inner.enum) ? inner.enum : undefined
    return !listed || listed.includes(value[key])
  })
}

function deref(schema: JsonSchema, root: JsonSchema): JsonSchema {
  if (schema.$ref === '#') return root
  if (typeof schema.$ref === 'string' && schema.$ref.startsWith('#/$defs/')) {
    return { ...(root.$defs as Record<string, JsonSchema>)[schema.$ref.slice('#/$defs/'.length)], ...schema, $ref: undefined }
  }
  return schema
}

const ajv = new Ajv2020({ strict: false, validateFormats: false, multipleOfPrecision: 9 })

/** ajv's verdict on a dialect's schema; Gemini's `nullable` read as OpenAPI means it (null joins the type). */
export function acceptsValue(schema: JsonSchema, value: unknown): { ok: boolean; errors: unknown } {
  return acceptor(schema)(value)
}

/** `acceptsValue` for one schema, compiled once for many values. */
export function acceptor(schema: JsonSchema): (value: unknown) => { ok: boolean; errors: unknown } {
  const validate = ajv.compile(openapiNullable(schema) as object)
  return (value) => {
    const ok = validate(value) as boolean
    return { ok, errors: ok ? undefined : validate.errors }
  }
}

function openapiNullable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(openapiNullable)
  if (!isObject(node)) return node
  const result: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node)) {
    // enum and const hold values, not schemas
    result[key] = key === 'enum' || key === 'const' || key === 'default' ? value : openapiNullable(value)
  }
  if (result.nullable === true && typeof result.type === 'string') result.type = [result.type, 'null']
  return result
}

/** Whether `path` names a spot of a 2020-12 schema: through properties, items, dict values, tuple positions, unions and references. */
export function pathExists(root: JsonSchema, path: string): boolean {
  const walk = (input: unknown, segments: Segment[], depth: number): boolean => {
    if (!isObject(input) || depth > 40) return false
    const schema = deref(input, root)
    for (const key of ['anyOf', 'oneOf', 'allOf']) {
      if (Array.isArray(schema[key]) && (schema[key] as unknown[]).some(branch => walk(branch, segments, depth + 1))) return true
    }
    if (!segments.length) return true
    const [segment, ...rest] = segments
    if ('key' in segment!) return isObject(schema.properties) && Object.hasOwn(schema.properties, segment.key) && walk(schema.properties[segment.key], rest, depth + 1)
    if ('index' in segment!) return Array.isArray(schema.prefixItems) && walk(schema.prefixItems[segment.index], rest, depth + 1)
    if (segment!.each === 'item') {
      return walk(schema.items, rest, depth + 1) || (Array.isArray(schema.prefixItems) && schema.prefixItems.some(item => walk(item, rest, depth + 1)))
    }
    const values = [schema.additionalProperties, ...Object.values(isObject(schema.patternProperties) ? schema.patternProperties : {})]
    return values.some(value => walk(value, rest, depth + 1))
  }
  return walk(root, segmentsOf(path), 0)
}

function isObject(value: unknown): value is Record<string, any> {
  return !!value && typeof value === 'object' && !Array.isArray(value)
}
