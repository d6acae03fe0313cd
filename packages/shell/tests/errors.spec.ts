import { expect, it } from 'vitest'
import { ShellError } from '../src'

it('ShellError keeps instanceof, name, code, message and cause', () => {
  const cause = new Error('ENOENT')
  const error = new ShellError('SPAWN_FAILED', 'bash could not be started', { cause })
  expect(error).toBeInstanceOf(ShellError)
  expect(error).toBeInstanceOf(Error)
  expect(error).toMatchObject({ name: 'ShellError', code: 'SPAWN_FAILED', message: 'bash could not be started', cause })
  expect(String(error)).toBe('ShellError: bash could not be started')
  expect([ShellError.is(error, 'SPAWN_FAILED'), ShellError.is(error, 'DISPOSED'), ShellError.is(new Error('x'))]).toEqual([true, false, false])
  expect(Object.keys(ShellError.Code)).toHaveLength(7)
})
