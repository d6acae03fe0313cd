/** An error that names what went wrong with a code from its class's `Code` table. */
export interface CodedError<C extends string = string> extends Error {
  readonly code: C
}

/** What {@link codedError} returns: the base an exported error class extends. */
export interface CodedErrorClass<Codes extends Record<string, string>> {
  new (code: keyof Codes & string, message: string, options?: ErrorOptions): CodedError<keyof Codes & string>
  /** Every code with a line saying what it means, frozen. */
  readonly Code: Readonly<Codes>
  /** `instanceof` the class it is called on, and of the given code when there is one. */
  is<T extends abstract new (...args: any) => CodedError>(this: T, error: unknown, code?: keyof Codes & string): error is InstanceType<T>
}

/**
 * The one way Dogu packages make their error classes:
 *
 * ```ts
 * export class FsError extends codedError('FsError', { NOT_FOUND: 'nothing exists at the path' }) {}
 * export namespace FsError { export type Code = keyof typeof FsError.Code }
 * ```
 *
 * Each call makes a new base, so classes made this way are unrelated to one another; a
 * subclass may add fields (a path) through its own constructor.
 */
export function codedError<const Codes extends Record<string, string>>(name: string, codes: Codes): CodedErrorClass<Codes> {
  type Code = keyof Codes & string
  const table = Object.freeze({ ...codes })
  class Base extends Error implements CodedError<Code> {
    static readonly Code = table
    override name = name

    constructor(readonly code: Code, message: string, options?: ErrorOptions) {
      super(message, options)
    }

    static is<T extends abstract new (...args: any) => CodedError>(this: T, error: unknown, code?: Code): error is InstanceType<T> {
      return error instanceof this && (!code || (error as CodedError).code === code)
    }
  }
  Object.defineProperty(Base, 'name', { value: `${name}Base` })
  return Base
}
