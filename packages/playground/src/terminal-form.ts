import type { InputQuestion } from '@dogu/core'

type Property = Record<string, unknown>

/** The fields of a form (its `requestedSchema`), by key, in order. */
function propertiesOf(input: Readonly<InputQuestion>): [string, Property][] {
  const properties = input.requestedSchema?.properties
  return properties && typeof properties === 'object' ? Object.entries(properties) : []
}

/** `enum` (titled by the legacy `enumNames`), or each `oneOf` / `anyOf` branch's `const` and `title` (SEP-1330): `r (Red)`. */
function choicesOf(property: Property): string[] | undefined {
  const shown = (value: unknown, title: unknown) => typeof title === 'string' && title && title !== String(value) ? `${String(value)} (${title})` : String(value)
  if (Array.isArray(property.enum)) {
    const names = Array.isArray(property.enumNames) ? property.enumNames : []
    return property.enum.map((value, i) => shown(value, names[i]))
  }
  const branches = property.oneOf ?? property.anyOf
  if (!Array.isArray(branches)) return undefined
  return branches.map((branch) => shown((branch as { const?: unknown })?.const, (branch as { title?: unknown })?.title))
}

/**
 * A form's fields as the terminal lists them under its message, one a line:
 * `username (string, required): Account name`, `plan (one of free, pro; default "free")`.
 */
export function formLines(input: Readonly<InputQuestion>): string[] {
  const required = new Set(input.requestedSchema?.required ?? [])
  return propertiesOf(input).map(([key, property]) => {
    const items = property.type === 'array' ? property.items as Property | undefined : undefined
    const choices = choicesOf(items ?? property)
    const facts = [choices ? `${items ? 'any of' : 'one of'} ${choices.join(', ')}` : String(property.type ?? 'string')]
    if (required.has(key)) facts.push('required')
    if (typeof property.format === 'string') facts.push(`format ${property.format}`)
    if (property.default !== undefined) facts.push(`default ${JSON.stringify(property.default)}`)
    const about = [property.title, property.description].filter((text) => typeof text === 'string' && text).join(' — ')
    return `${key} (${facts.join(', ')})${about ? `: ${about}` : ''}`
  })
}

// `key=value`, the value a JSON string in quotes or a run of non-space characters.
const PAIR = /^\s*([^\s="{}]+)=("(?:[^"\\]|\\.)*"|\S*)/

/**
 * Reads a line typed at a form: a JSON object, or `key=value` pairs separated by spaces (a
 * value with spaces as a JSON string: `name="Ada Lovelace"`). A bare value is read as its
 * field's type (`3` a number for a number field, `true`/`yes` for a boolean, `a,b` a list
 * for a multiple choice), text otherwise. `undefined` when the line is neither shape; a
 * string saying what is wrong when it names a field the form lacks or is bad JSON.
 */
export function parseFormLine(line: string, input: Readonly<InputQuestion>): { values: Record<string, unknown> } | string | undefined {
  const properties = new Map(propertiesOf(input))
  const stray = (key: string) => `the form has no field ${JSON.stringify(key)}; its fields: ${[...properties.keys()].join(', ')}`
  let rest = line.trim()
  if (rest.startsWith('{')) {
    let parsed: unknown
    try {
      parsed = JSON.parse(rest)
    } catch (error) {
      return `the form is not JSON (${error instanceof Error ? error.message : String(error)})`
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return 'the form must be a JSON object of fields, like {"name": "value"}'
    const unknown = properties.size ? Object.keys(parsed).find((key) => !properties.has(key)) : undefined
    return unknown === undefined ? { values: parsed as Record<string, unknown> } : stray(unknown)
  }
  const values: Record<string, unknown> = {}
  while (rest) {
    const pair = PAIR.exec(rest)
    if (!pair) return undefined
    rest = rest.slice(pair[0].length).trim()
    const [, key, raw] = pair
    const property = properties.get(key)
    if (properties.size && !property) return stray(key)
    if (raw.startsWith('"')) {
      try {
        values[key] = JSON.parse(raw)
      } catch (error) {
        return `the value of ${key} is not a JSON string (${error instanceof Error ? error.message : String(error)})`
      }
      continue
    }
    values[key] = typed(raw, property?.type)
  }
  return Object.keys(values).length ? { values } : undefined
}

const YES = new Set(['true', 'yes', 'y', 'on', '1'])
const NO = new Set(['false', 'no', 'n', 'off', '0'])

/** A bare value as its field's JSON type; left as text when it is not one (the form's check says why). */
function typed(raw: string, type: unknown): unknown {
  if (type === 'number' || type === 'integer') return raw !== '' && Number.isFinite(Number(raw)) ? Number(raw) : raw
  if (type === 'boolean') return YES.has(raw.toLowerCase()) ? true : NO.has(raw.toLowerCase()) ? false : raw
  if (type === 'array') return raw ? raw.split(',').map((item) => item.trim()).filter(Boolean) : []
  return raw
}
