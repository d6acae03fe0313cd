// CodedErrorClass is named so that the emitted declarations reach it through @dogu/core, a
// dependency of this package, not through @dogu/schema, which is not one.
import { codedError, type CodedErrorClass } from '@dogu/core'

/**
 * A failure of the shell tool itself, as opposed to a command that ran and failed (a
 * non-zero exit is a normal result). Thrown from `run`; the pipeline reports it as an
 * `error` result the model reads.
 */
export class ShellError extends codedError('ShellError', {
  SPAWN_FAILED: 'the shell could not be started',
  CWD_OUTSIDE_WORKSPACE: 'the working directory is outside the workspace',
  CWD_INVALID: 'the working directory does not exist or is not a directory',
  DISPOSED: 'the process table was disposed',
  INVALID_OPTIONS: 'invalid options',
  SANDBOX_REQUIRED: 'the sandbox is required but unavailable',
  SANDBOX_SETUP: 'the sandbox could not be set up',
}) {}

export namespace ShellError {
  export type Code = keyof typeof ShellError.Code
}
