import { type FormField, formFields, type FormProblem, type InputQuestion, MAX_FORM_LENGTH, parseFormReply } from '@dogu/core'

/** A field's choices as the terminal shows them: `r (Red)`. */
function choicesOf(field: FormField): string[] | undefined {
  return field.choices?.map((choice) => choice.title ? `${choice.value} (${choice.title})` : choice.value)
}

/**
 * A form's fields as the terminal lists them under its message, one a line:
 * `username (string, required): Account name`, `plan (one of free, pro; default "free")`.
 */
export function formLines(input: Readonly<InputQuestion>): string[] {
  return formFields(input).map((field) => {
    const choices = choicesOf(field)
    const facts = [choices ? `${field.type === 'array' ? 'any of' : 'one of'} ${choices.join(', ')}` : field.type]
    if (field.required) facts.push('required')
    if (field.format) facts.push(`format ${field.format}`)
    if (field.default !== undefined) facts.push(`default ${JSON.stringify(field.default)}`)
    const about = [field.title, field.description].filter(Boolean).join(' — ')
    return `${field.key} (${facts.join(', ')})${about ? `: ${about}` : ''}`
  })
}

/**
 * Reads a line typed at a form (core's `parseFormReply`: a JSON object, or `key=value` pairs,
 * each bare value read as its field's type). `undefined` when the line is neither shape; a
 * string saying what is wrong when it names a field the form lacks or is bad JSON. A leading
 * number is the chat's way to pick one of several forms: the terminal shows one at a time.
 */
export function parseFormLine(line: string, input: Readonly<InputQuestion>): { values: Record<string, unknown> } | string | undefined {
  const fields = formFields(input)
  const read = parseFormReply(line, fields)
  if (!read) return undefined
  if ('problem' in read) return problemText(read, fields)
  if (read.number !== undefined) return undefined
  return { values: read.values }
}

function problemText({ problem, detail }: FormProblem, fields: readonly FormField[]): string {
  switch (problem) {
    case 'unknown-field': return `the form has no field ${JSON.stringify(detail)}; its fields: ${fields.map((field) => field.key).join(', ')}`
    case 'json': return `the form is not JSON (${detail})`
    case 'object': return 'the form must be a JSON object of fields, like {"name": "value"}'
    case 'too-long': return `the line is too long for a form (at most ${MAX_FORM_LENGTH} characters)`
  }
}
