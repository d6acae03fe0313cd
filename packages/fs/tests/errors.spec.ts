import { expect, it } from 'vitest'
import { FsError } from '../src'

it('FsError keeps instanceof, name, code, message and cause', () => {
  const cause = new Error('ENOENT')
  const error = new FsError('NOT_FOUND', 'nothing at notes.txt', { cause })
  expect(error).toBeInstanceOf(FsError)
  expect(error).toBeInstanceOf(Error)
  expect(error).toMatchObject({ name: 'FsError', code: 'NOT_FOUND', message: 'nothing at notes.txt', cause })
  expect(String(error)).toBe('FsError: nothing at notes.txt')
  expect([FsError.is(error, 'NOT_FOUND'), FsError.is(error, 'STALE'), FsError.is(new Error('x'))]).toEqual([true, false, false])
  expect(Object.keys(FsError.Code)).toHaveLength(23)
})
