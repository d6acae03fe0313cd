import { describe, expect, it } from 'vitest'
import { codedError, SchemaError } from '../src'

describe('codedError', () => {
  class AlphaError extends codedError('AlphaError', { BAD: 'something is bad', WORSE: 'something is worse' }) {}
  class BetaError extends codedError('BetaError', { BAD: 'something is bad' }) {}

  it('makes a class whose instances carry their code, name, message and cause', () => {
    const cause = new Error('root')
    const error = new AlphaError('BAD', 'the input is bad', { cause })
    expect(error).toBeInstanceOf(AlphaError)
    expect(error).toBeInstanceOf(Error)
    expect(error).toMatchObject({ name: 'AlphaError', code: 'BAD', message: 'the input is bad', cause })
    expect(String(error)).toBe('AlphaError: the input is bad')
    expect(error.stack).toMatch(/^AlphaError: the input is bad\n/)
    expect(AlphaError.name).toBe('AlphaError')
  })

  it('publishes a frozen code table', () => {
    expect(AlphaError.Code).toEqual({ BAD: 'something is bad', WORSE: 'something is worse' })
    expect(Object.isFrozen(AlphaError.Code)).toBe(true)
  })

  it('is() checks the class it is called on, and the code when given', () => {
    const alpha = new AlphaError('BAD', 'x')
    expect([AlphaError.is(alpha), AlphaError.is(alpha, 'BAD'), AlphaError.is(alpha, 'WORSE')]).toEqual([true, true, false])
    expect([BetaError.is(alpha), AlphaError.is(new Error('x')), AlphaError.is(undefined)]).toEqual([false, false, false])
  })

  it('makes unrelated classes, one base per call', () => {
    expect(new AlphaError('BAD', 'x')).not.toBeInstanceOf(BetaError)
    expect(new BetaError('BAD', 'x')).not.toBeInstanceOf(AlphaError)
  })
})

describe('SchemaError', () => {
  it('is a coded error that names the spot', () => {
    const error = new SchemaError('UNSUPPORTED_TYPE', '$.a[0]', 'Schema<function> has no JSON Schema form')
    expect(error).toBeInstanceOf(SchemaError)
    expect(error).toBeInstanceOf(Error)
    expect(error).toMatchObject({
      name: 'SchemaError',
      code: 'UNSUPPORTED_TYPE',
      path: '$.a[0]',
      message: 'Schema<function> has no JSON Schema form (at $.a[0])',
    })
    expect(SchemaError.is(error, 'UNSUPPORTED_TYPE')).toBe(true)
    expect(SchemaError.is(error, 'INVALID_SCHEMA')).toBe(false)
    expect(Object.keys(SchemaError.Code)).toEqual([
      'UNSUPPORTED_TYPE', 'UNSUPPORTED_KEYWORD', 'UNSUPPORTED_CONSTRAINT', 'DIALECT_REFUSED', 'INVALID_NAME', 'INVALID_SCHEMA', 'INVALID_ENCODING',
    ])
  })
})
