/**
 * A failure of the shell tool itself, as opposed to a command that ran and failed (a
 * non-zero exit is a normal result). Thrown from `run`; the pipeline reports it as an
 * `error` result the model reads.
 */
export class ShellError extends Error {
  override name = 'ShellError'

  constructor(public code: ShellError.Code, message: string, options?: ErrorOptions) {
    super(message, options)
  }

  static is(error: unknown, code?: ShellError.Code): error is ShellError {
    return error instanceof ShellError && (!code || error.code === code)
  }
}

export namespace ShellError {
  export const Code = {
    SPAWN_FAILED: 'the shell could not be started',
    CWD_OUTSIDE_WORKSPACE: 'the working directory is outside the workspace',
    CWD_INVALID: 'the working directory does not exist or is not a directory',
    DISPOSED: 'the process table was disposed',
    INVALID_OPTIONS: 'invalid options',
  } as const
  export type Code = keyof typeof Code
}
