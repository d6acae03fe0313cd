import type Schema from 'schemastery'
import { DoguError } from '../errors'
import type { ElicitationJsonSchema } from './elicitation'

type Field = Record<string, unknown>

/**
 * The MCP `requestedSchema` of a schemastery form: an object whose fields are strings,
 * numbers, integers, booleans, single-select enums (`enum`, or `oneOf` of `{ const, title }`
 * when the choices have descriptions: SEP-1330) and multi-select arrays of such enums, each
 * with its title, description and default (SEP-1034). Anything else cannot be shown as a
 * form field, and is refused with the field's name.
 */
export function requestedSchemaOf(schema: Schema): ElicitationJsonSchema {
  const form = unwrap(schema)
  if (form.type !== 'object' || !form.dict) throw invalid('$', 'the form must be Schema.object({ … }) of primitive fields')
  const properties: Record<string, Field> = {}
  const required: string[] = []
  for (const [key, field] of Object.entries(form.dict as Record<string, Schema>)) {
    properties[key] = fieldOf(field, key)
    if (field.meta?.required) required.push(key)
  }
  return required.length ? { type: 'object', properties, required } : { type: 'object', properties }
}

function fieldOf(schema: Schema, key: string): Field {
  const inner = unwrap(schema)
  const meta = { ...inner.meta, ...schema.meta }
  const field: Field = {}
  if (inner.type === 'string') {
    field.type = 'string'
    if (typeof meta.min === 'number') field.minLength = meta.min
    if (typeof meta.max === 'number') field.maxLength = meta.max
    const format = FORMATS[String(meta.role)]
    if (format) field.format = format
  } else if (inner.type === 'number') {
    field.type = meta.step === 1 ? 'integer' : 'number'
    if (typeof meta.min === 'number') field.minimum = meta.min
    if (typeof meta.max === 'number') field.maximum = meta.max
  } else if (inner.type === 'boolean') {
    field.type = 'boolean'
  } else if (inner.type === 'union' || inner.type === 'const') {
    Object.assign(field, choicesOf(inner, key, 'oneOf'))
  } else if (inner.type === 'array' && inner.inner) {
    field.type = 'array'
    field.items = choicesOf(unwrap(inner.inner), key, 'anyOf')
    if (typeof meta.min === 'number') field.minItems = meta.min
    if (typeof meta.max === 'number') field.maxItems = meta.max
  } else {
    throw invalid(key, `a form field must be a string, number, boolean, enum or array of enum choices, not ${inner.type}`)
  }
  const description = textOf(meta.description)
  if (description) field.description = description
  if (meta.default !== undefined) field.default = meta.default
  return field
}

/** Choices of an enum: `enum` when they are bare strings, `oneOf`/`anyOf` of `{ const, title }` when any is described. */
function choicesOf(schema: Schema, key: string, titled: 'oneOf' | 'anyOf'): Field {
  const list = schema.type === 'const' ? [schema] : (schema.list ?? []).map(unwrap)
  if (!list.length || list.some((choice) => choice.type !== 'const' || typeof choice.value !== 'string')) {
    throw invalid(key, 'the choices of a form field must be string constants: Schema.union([\'a\', \'b\'])')
  }
  const values = list.map((choice) => choice.value as string)
  if (!list.some((choice) => textOf(choice.meta?.description))) return { type: 'string', enum: values }
  return { type: 'string', [titled]: list.map((choice, i) => ({ const: values[i], title: textOf(choice.meta?.description) ?? values[i] })) }
}

// `.role('email')` and friends: the formats MCP forms know.
const FORMATS: Record<string, string> = { email: 'email', link: 'uri', url: 'uri', date: 'date', datetime: 'date-time' }

function unwrap(schema: Schema): Schema {
  let current = schema
  while (current.type === 'transform' && current.inner) current = current.inner
  return current
}

/** A description as text: a plain string, or an i18n dictionary's first entry. */
function textOf(description: unknown): string | undefined {
  if (typeof description === 'string') return description || undefined
  if (description && typeof description === 'object') {
    const first = Object.values(description as Record<string, unknown>).find((text) => typeof text === 'string' && text)
    return first as string | undefined
  }
  return undefined
}

function invalid(key: string, message: string) {
  return new DoguError('INVALID_ELICITATION', `call.elicit: field ${key}: ${message}`)
}
