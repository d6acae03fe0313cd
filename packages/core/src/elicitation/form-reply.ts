import type { InputQuestion } from '../permissions/asker'

/** One field of a tool's form (`call.elicit`), as a text asker (the chat, the terminal) shows it and reads a reply to it. */
export interface FormField {
  key: string
  /** The JSON type the value is read as: `key=3` is a number for a `number` field, text for a `string`. */
  type: 'string' | 'number' | 'integer' | 'boolean' | 'array'
  required: boolean
  title?: string
  description?: string
  /** The values it may take (an enum), when it is a choice, each with its title when it has one; for an `array`, what each item may take. */
  choices?: { value: string; title?: string }[]
  /** Its default, as JSON. */
  default?: unknown
  /** A string's format (`email`, `uri`, `date`, `date-time`). */
  format?: string
}

/**
 * The fields of a form, from its `requestedSchema` (MCP's flat object of primitive fields,
 * which the engine makes from the tool's schemastery schema). Nothing for an input that has
 * none (an approval's edit): its fields are the call's arguments.
 */
export function formFields(input: Readonly<InputQuestion>): FormField[] {
  const json = input.requestedSchema
  if (!json || typeof json.properties !== 'object' || !json.properties) return []
  const required = new Set(Array.isArray(json.required) ? json.required : [])
  return Object.entries(json.properties).map(([key, property]) => {
    const items = property.items as Record<string, unknown> | undefined
    const type = property.type === 'array' ? 'array' : TYPES.has(property.type as string) ? property.type as FormField['type'] : 'string'
    const field: FormField = { key, type, required: required.has(key) }
    if (typeof property.title === 'string') field.title = property.title
    if (typeof property.description === 'string') field.description = property.description
    if (typeof property.format === 'string') field.format = property.format
    if (property.default !== undefined) field.default = property.default
    const choices = choicesOf(type === 'array' ? items ?? {} : property)
    if (choices) field.choices = choices
    return field
  })
}

const TYPES = new Set(['string', 'number', 'integer', 'boolean'])

/** `enum` (titled by the legacy `enumNames`), or each `oneOf` / `anyOf` branch's `const` and `title` (SEP-1330). */
function choicesOf(property: Record<string, unknown>): FormField['choices'] {
  const titled = (value: unknown, title: unknown) => {
    const choice: { value: string; title?: string } = { value: String(value) }
    if (typeof title === 'string' && title && title !== choice.value) choice.title = title
    return choice
  }
  if (Array.isArray(property.enum)) {
    const names = Array.isArray(property.enumNames) ? property.enumNames : []
    return property.enum.map((value, i) => titled(value, names[i]))
  }
  const branches = property.oneOf ?? property.anyOf
  if (!Array.isArray(branches)) return undefined
  const choices = branches.filter((branch) => branch && typeof branch === 'object' && 'const' in branch)
    .map((branch) => titled((branch as { const: unknown }).const, (branch as { title?: unknown }).title))
  return choices.length ? choices : undefined
}

/** A typed reply (a chat message, a terminal line) read as values for a form: `username=bob email=bob@example.com`, or `{"username": "bob"}`. */
export interface FormReply {
  /** The question's number, when the reply starts with one: `2 username=bob`, `#2 {…}`. */
  number?: number
  /** The values typed, by field, read as each field's type. */
  values: Record<string, unknown>
}

/** Why a reply that reads as a form's values cannot be used: a locale key under `dogu.approvals.form-problem`. */
export interface FormProblem {
  problem: 'too-long' | 'json' | 'object' | 'unknown-field'
  detail?: string
}

/** Longest form reply read: a form of more belongs in a console. */
export const MAX_FORM_LENGTH = 16_384

/** The words that read as yes for a boolean field, in every language the plugin speaks; `BOOLEAN_NO` the no's. */
const BOOLEAN_YES = new Set(['true', 'yes', 'y', 'on', '1', '是', '对', '真', '开'])
const BOOLEAN_NO = new Set(['false', 'no', 'n', 'off', '0', '否', '不', '错', '假', '关'])

// An optional question number, then the rest: `2 a=1`, `#2 {…}`.
const NUMBERED = /^#?\s*(\d{1,6})\s+(?=\S)/u
// One `key=value` pair: the key, `=` (or the full-width `＝`), then a quoted JSON string or a
// bare value up to the next space, `;` / `；` / `，`, or a `,` that starts the next pair.
const PAIR = /^[\s,;，；、]*([^\s=＝"{}]+)\s*[=＝]\s*("(?:[^"\\]|\\.)*"|(?:(?![\s;；，]|,\s*[^\s=＝,]+\s*[=＝])[^])*)/u

/**
 * Reads a reply as a form's values: a JSON object, or `key=value` pairs separated by spaces,
 * new lines, `,` or `；` (a value with spaces in quotes: `name="Ada Lovelace"`), optionally
 * after the question's number. Each bare value is read as its field's type: `3` a number
 * for a number field, `true` / `是` for a boolean, `a,b` a list for a multiple choice, text
 * otherwise. `undefined` when the reply is not that shape at all (conversation); a
 * `FormProblem` when it is, but names a field the form lacks or is bad JSON.
 *
 * @example
 * parseFormReply('username=bob age=30', fields) // { values: { username: 'bob', age: 30 } }
 * parseFormReply('2 {"username": "bob"}', fields) // { number: 2, values: { username: 'bob' } }
 */
export function parseFormReply(text: string, fields: readonly FormField[]): FormReply | FormProblem | undefined {
  if (typeof text !== 'string') return undefined
  let rest = text.trim()
  let number: number | undefined
  const numbered = NUMBERED.exec(rest)
  if (numbered) {
    number = Number(numbered[1])
    if (number === 0) return undefined
    rest = rest.slice(numbered[0].length)
  }
  const looksJson = rest.startsWith('{')
  if (!looksJson && !PAIR.test(rest)) return undefined
  if (rest.length > MAX_FORM_LENGTH) return { problem: 'too-long', detail: String(MAX_FORM_LENGTH) }
  const byKey = new Map(fields.map((field) => [field.key, field]))
  const unknown = (key: string): FormProblem => ({ problem: 'unknown-field', detail: key })
  let values: Record<string, unknown>
  if (looksJson) {
    let parsed: unknown
    try {
      parsed = JSON.parse(rest)
    } catch (error) {
      return { problem: 'json', detail: error instanceof Error ? error.message : String(error) }
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return { problem: 'object' }
    values = parsed as Record<string, unknown>
    // A form of known fields refuses others; a form without a field list (no requestedSchema) leaves them to the check.
    const stray = byKey.size ? Object.keys(values).find((key) => !byKey.has(key)) : undefined
    if (stray !== undefined) return unknown(stray)
  } else {
    values = {}
    while (rest.replace(/^[\s,;，；、]+/u, '')) {
      const pair = PAIR.exec(rest)
      // Words between the pairs: a sentence that happens to hold an `=`, not an answer.
      if (!pair) return undefined
      rest = rest.slice(pair[0].length)
      const key = pair[1].normalize('NFKC')
      const field = byKey.get(key)
      if (byKey.size && !field) return unknown(pair[1])
      let raw = pair[2]
      let quoted = false
      if (raw.startsWith('"')) {
        try {
          raw = JSON.parse(raw) as string
          quoted = true
        } catch (error) {
          return { problem: 'json', detail: error instanceof Error ? error.message : String(error) }
        }
      }
      values[key] = quoted ? raw : typed(raw, field)
    }
  }
  return number === undefined ? { values } : { number, values }
}

/** A bare value as its field's type; left as text when it is not one (the form's check says why). */
function typed(raw: string, field: FormField | undefined): unknown {
  switch (field?.type) {
    case 'number':
    case 'integer': {
      const number = Number(raw.normalize('NFKC'))
      return raw.trim() !== '' && Number.isFinite(number) ? number : raw
    }
    case 'boolean': {
      const word = raw.normalize('NFKC').toLowerCase()
      return BOOLEAN_YES.has(word) ? true : BOOLEAN_NO.has(word) ? false : raw
    }
    case 'array':
      return raw === '' ? [] : raw.split(/[,，、]/u).map((item) => item.trim()).filter(Boolean)
    default:
      return raw
  }
}

/** A value as a reply would type it: `bob`, `"Ada Lovelace"`, `3`, `a,b`. */
export function typedValue(value: unknown): string {
  if (Array.isArray(value)) return value.map((item) => typedValue(item)).join(',')
  if (typeof value === 'string') return value === '' || /[\s"=,;，；]/u.test(value) ? JSON.stringify(value) : value
  return JSON.stringify(value) ?? ''
}
