import { expectTypeOf, test } from 'vitest'
import { codedError, SchemaError } from '../src'

class AlphaError extends codedError('AlphaError', { BAD: 'something is bad', WORSE: 'something is worse' }) {}
namespace AlphaError {
  export type Code = keyof typeof AlphaError.Code
}

test('code is the union of the table keys', () => {
  expectTypeOf<AlphaError.Code>().toEqualTypeOf<'BAD' | 'WORSE'>()
  expectTypeOf(new AlphaError('BAD', 'x').code).toEqualTypeOf<'BAD' | 'WORSE'>()
  // @ts-expect-error: not a code of the table
  new AlphaError('GOOD', 'x')
})

test('is() narrows to the class it is called on', () => {
  const error: unknown = null
  if (SchemaError.is(error, 'UNSUPPORTED_TYPE')) {
    expectTypeOf(error).toEqualTypeOf<SchemaError>()
    expectTypeOf(error.path).toEqualTypeOf<string>()
  }
  if (AlphaError.is(error)) expectTypeOf(error).toEqualTypeOf<AlphaError>()
  // @ts-expect-error: not a code of SchemaError
  SchemaError.is(error, 'BAD')
})
