import { codedError } from './coded-error'

/** A schema that cannot be expressed where it is asked to go. `path` names the spot (`$.a[0]`). */
export class SchemaError extends codedError('SchemaError', {
  UNSUPPORTED_TYPE: 'this schemastery type has no JSON Schema form',
  UNSUPPORTED_KEYWORD: 'this JSON Schema keyword has no schemastery form',
  UNSUPPORTED_CONSTRAINT: 'this schemastery constraint has no JSON Schema form',
  DIALECT_REFUSED: 'no provider form exists: an unknown dialect, or tool parameters that accept no object',
  INVALID_NAME: 'the name is outside the provider limits',
  INVALID_SCHEMA: 'the schema is malformed',
  INVALID_ENCODING: 'a field the dialect sends as a JSON-encoded string is not valid JSON',
}) {
  constructor(code: SchemaError.Code, readonly path: string, message: string) {
    super(code, `${message} (at ${path})`)
  }
}

export namespace SchemaError {
  export type Code = keyof typeof SchemaError.Code
}
