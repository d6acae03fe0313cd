import { compileValidator, formatIssues, fromJsonSchema, isSchema, type JsonSchema, type ValidationResult } from '@dogu/schema'
import type Schema from 'schemastery'
import { DoguError } from '../errors'
import type { ElicitQuestion } from '../permission-gate'
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
  const question: ElicitQuestion = {
    schema,
    message,
    requestedSchema: Object.freeze(requestedSchema),
    // An answer with no fields is the form's defaults: what SEP-1034 asks clients to fill in.
    validate: (value: unknown): ValidationResult => validator(value === undefined || value === null ? {} : value),
  }
  if (timeout !== undefined) question.timeout = timeout
  return question
}

/** Why `question` refuses `value`, in a line a person can act on; `undefined` when it accepts it. */
export function answerProblem(question: ElicitQuestion, value: unknown): string | undefined {
  const result = question.validate(value)
  return result.ok ? undefined : formatIssues(result.issues)
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
