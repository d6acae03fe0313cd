import { expect, it } from 'vitest'
import { HttpFetchError } from '../src'

it('HttpFetchError keeps instanceof, name, code, message and cause', () => {
  const cause = new Error('ECONNRESET')
  const error = new HttpFetchError('FETCH_FAILED', 'the connection was reset', { cause })
  expect(error).toBeInstanceOf(HttpFetchError)
  expect(error).toBeInstanceOf(Error)
  expect(error).toMatchObject({ name: 'HttpFetchError', code: 'FETCH_FAILED', message: 'the connection was reset', cause })
  expect(String(error)).toBe('HttpFetchError: the connection was reset')
  expect([HttpFetchError.is(error, 'FETCH_FAILED'), HttpFetchError.is(error, 'TIMEOUT'), HttpFetchError.is(new Error('x'))]).toEqual([true, false, false])
  expect(Object.keys(HttpFetchError.Code)).toHaveLength(11)
})
