import { compileValidator, formatIssues, fromJsonSchema, isSchema, type JsonSchema, type ValidationResult } from '@dogu/schema'
import type Schema from 'schemastery'
import { DoguError } from '../errors'
import type { ElicitQuestion } from '../permission-gate'
import type { ArgumentProblem, RevisionRefusal } from '../result-params'
import type { ElicitationJsonSchema, ElicitationSchema, ElicitOptions } from './elicitation'
import { requestedSchemaOf } from './requested-schema'

/**
 * What `call.elicit` asks, checked before anyone is asked: the form as schemastery (what
 * validates answers and what consoles render) and as MCP's `requestedSchema` (what MCP
 * clients are sent: the tool's own JSON when it gave JSON, so SEP-1330's legacy
 * `enumNames` and the like reach them unchanged).
 * @throws {DoguError} `INVALID_ELICITATION` for a form that is not a flat object of primitive fields.
 */
export function elicitQuestion(form: ElicitationSchema, message: string, options: ElicitOptions = {}): ElicitQuestion {
  let schema: Schema
  let requestedSchema: ElicitationJsonSchema
  if (isSchema(form)) {
    schema = form
    requestedSchema = requestedSchemaOf(form)
  } else {
    requestedSchema = checkedJson(form)
    try {
      schema = fromJsonSchema(requestedSchema as JsonSchema)
    } catch (error) {
      throw new DoguError('INVALID_ELICITATION', `call.elicit: the requested schema cannot be read: ${error instanceof Error ? error.message : String(error)}`, { cause: error })
    }
  }
  const timeout = options.timeout
  if (timeout !== undefined && !(timeout > 0 && Number.isFinite(timeout))) {
    throw new DoguError('INVALID_ELICITATION', `call.elicit: timeout must be a positive number of milliseconds, got ${JSON.stringify(timeout)}`)
  }
  const validator = compileValidator(schema)
  const defaults = defaultsOf(requestedSchema)
  const question: ElicitQuestion = {
    schema,
    message,
    requestedSchema: Object.freeze(requestedSchema),
    // A field left out takes its default, required or not: what SEP-1034 asks clients to
    // fill in (schemastery would refuse a missing required field despite its default).
    validate: (value: unknown): ValidationResult => {
      const given = value === undefined || value === null ? {} : value
      return validator(isPlainObject(given) ? { ...defaults, ...withoutUndefined(given) } : given)
    },
  }
  if (timeout !== undefined) question.timeout = timeout
  return question
}

/** Why `question` refuses `value`, in a line a person can act on; `undefined` when it accepts it. */
export function answerProblem(question: ElicitQuestion, value: unknown): string | undefined {
  return answerRefusal(question, value)?.error
}

/**
 * Why `question` refuses `value`: `answerProblem`'s English and its structured form, the
 * form's problems by path, for a person's locale (`describeRevision`); `undefined` when it accepts it.
 */
export function answerRefusal(question: ElicitQuestion, value: unknown): { error: string; refusal: RevisionRefusal } | undefined {
  const result = question.validate(value)
  if (result.ok) return undefined
  const problems = result.issues.map(({ message: _, ...problem }) => problem as ArgumentProblem)
  return { error: formatIssues(result.issues), refusal: { kind: 'validation', problems } }
}

/** The form's fields that have a default, with it. */
function defaultsOf(form: ElicitationJsonSchema): Record<string, unknown> {
  const defaults: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(form.properties)) {
    if (field && typeof field === 'object' && field.default !== undefined) defaults[key] = field.default
  }
  return defaults
}

function withoutUndefined(value: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(value)) if (field !== undefined) kept[key] = field
  return kept
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function checkedJson(form: unknown): ElicitationJsonSchema {
  const json = form as ElicitationJsonSchema
  if (!json || typeof json !== 'object' || json.type !== 'object' || !json.properties || typeof json.properties !== 'object' || Array.isArray(json.properties)) {
    throw new DoguError('INVALID_ELICITATION', 'call.elicit: the form must be a schemastery Schema.object({ … }) or a JSON Schema { type: "object", properties: { … } }')
  }
  if (json.required !== undefined && (!Array.isArray(json.required) || json.required.some((key) => typeof key !== 'string'))) {
    throw new DoguError('INVALID_ELICITATION', 'call.elicit: "required" must be an array of field names')
  }
  return json
}
