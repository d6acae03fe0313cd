/**
 * A developer's mistake with the permissions API: a bad rule, an unknown mode, an asker
 * that is not a function. Thrown at once, where the mistake is made; what happens to a
 * call (denied, timed out) is never thrown, it is a decision.
 */
export class PermissionError extends Error {
  override name = 'PermissionError'

  constructor(public code: PermissionError.Code, message: string, options?: ErrorOptions) {
    super(message, options)
  }

  static is(error: unknown, code?: PermissionError.Code): error is PermissionError {
    return error instanceof PermissionError && (!code || error.code === code)
  }
}

export namespace PermissionError {
  export const Code = {
    INVALID_RULE: 'invalid permission rule',
    INVALID_MODE: 'unknown permission mode',
    INVALID_OPTIONS: 'invalid permission engine options',
    INVALID_ASKER: 'an asker must be a function',
  } as const
  export type Code = keyof typeof Code
}
