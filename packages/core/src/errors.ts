import { codedError } from '@dogu/schema'

/**
 * A developer's mistake: a bad tool definition, a name conflict, misuse of the API.
 * What a model does wrong is never thrown; it becomes a result the model can read.
 */
export class DoguError extends codedError('DoguError', {
  INVALID_NAME: 'tool name must match /^[a-zA-Z0-9_-]{1,64}$/',
  INVALID_DEFINITION: 'invalid tool definition',
  INVALID_ARGS_SCHEMA: 'tool arguments must be described by an object schema',
  NAME_CONFLICT: 'a tool of this name is owned by another live plugin',
  INVALID_OPTIONS: 'invalid options',
  INACTIVE: 'the owner is no longer active',
  INVALID_ELICITATION: 'call.elicit needs a flat form of primitive fields',
}) {}

export namespace DoguError {
  export type Code = keyof typeof DoguError.Code
}
