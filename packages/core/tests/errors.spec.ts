import { expect, it } from 'vitest'
import { DoguError, PermissionError } from '../src'

it('DoguError keeps instanceof, name, code, message and cause', () => {
  const cause = new Error('root')
  const error = new DoguError('NAME_CONFLICT', 'echo is owned by plugin "a"', { cause })
  expect(error).toBeInstanceOf(DoguError)
  expect(error).toBeInstanceOf(Error)
  expect(error).not.toBeInstanceOf(PermissionError)
  expect(error).toMatchObject({ name: 'DoguError', code: 'NAME_CONFLICT', message: 'echo is owned by plugin "a"', cause })
  expect(String(error)).toBe('DoguError: echo is owned by plugin "a"')
  expect([DoguError.is(error, 'NAME_CONFLICT'), DoguError.is(error, 'INACTIVE'), PermissionError.is(error)]).toEqual([true, false, false])
  expect(Object.keys(DoguError.Code)).toEqual([
    'INVALID_NAME', 'INVALID_DEFINITION', 'INVALID_ARGS_SCHEMA', 'NAME_CONFLICT', 'INVALID_OPTIONS', 'INACTIVE', 'INVALID_ELICITATION',
  ])
})

it('PermissionError keeps instanceof, name, code, message and cause', () => {
  const cause = new Error('root')
  const error = new PermissionError('INVALID_RULE', 'rule 2: unknown field "whom"', { cause })
  expect(error).toBeInstanceOf(PermissionError)
  expect(error).toBeInstanceOf(Error)
  expect(error).not.toBeInstanceOf(DoguError)
  expect(error).toMatchObject({ name: 'PermissionError', code: 'INVALID_RULE', message: 'rule 2: unknown field "whom"', cause })
  expect(String(error)).toBe('PermissionError: rule 2: unknown field "whom"')
  expect([PermissionError.is(error, 'INVALID_RULE'), PermissionError.is(error, 'INVALID_MODE'), DoguError.is(error)]).toEqual([true, false, false])
  expect(Object.keys(PermissionError.Code)).toEqual(['INVALID_RULE', 'INVALID_MODE', 'INVALID_OPTIONS', 'INVALID_ASKER'])
})
