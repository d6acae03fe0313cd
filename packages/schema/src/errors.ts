/** A schema that cannot be expressed where it is asked to go. `path` names the spot (`$.a[0]`). */
export class SchemaError extends Error {
  override name = 'SchemaError'

  constructor(public code: SchemaError.Code, public path: string, message: string) {
    super(`${message} (at ${path})`)
  }

  static is(error: unknown, code?: SchemaError.Code): error is SchemaError {
    return error instanceof SchemaError && (!code || error.code === code)
  }
}

export namespace SchemaError {
  export const Code = {
    UNSUPPORTED_TYPE: 'this schemastery type has no JSON Schema form',
    UNSUPPORTED_KEYWORD: 'this JSON Schema keyword has no schemastery form',
    UNSUPPORTED_CONSTRAINT: 'this schemastery constraint has no JSON Schema form',
    DIALECT_REFUSED: 'the provider dialect cannot express this schema',
    INVALID_NAME: 'the name is outside the provider limits',
    INVALID_SCHEMA: 'the schema is malformed',
  } as const
  export type Code = keyof typeof Code
}
