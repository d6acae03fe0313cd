import { codedError } from '@dogu/schema'

/**
 * A developer's mistake with the permissions API: a bad rule, an unknown mode, an asker
 * that is not a function. Thrown at once, where the mistake is made; what happens to a
 * call (denied, timed out) is never thrown, it is a decision.
 */
export class PermissionError extends codedError('PermissionError', {
  INVALID_RULE: 'invalid permission rule',
  INVALID_MODE: 'unknown permission mode',
  INVALID_OPTIONS: 'invalid permission engine options',
  INVALID_ASKER: 'an asker must be a function',
}) {}

export namespace PermissionError {
  export type Code = keyof typeof PermissionError.Code
}
