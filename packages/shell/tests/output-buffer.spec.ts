import { describe, expect, it } from 'vitest'
import { OutputBuffer } from '../src/output-buffer'

describe('OutputBuffer', () => {
  it('keeps everything while it fits', () => {
    const buffer = new OutputBuffer(4, 4)
    buffer.push(Buffer.from('abc'))
    buffer.push(Buffer.from('defgh'))
    expect(buffer.result()).toEqual({ text: 'abcdefgh', bytes: 8, omittedBytes: 0 })
  })

  it('keeps the head and the tail and counts what was dropped between', () => {
    const buffer = new OutputBuffer(4, 4)
    for (const chunk of ['ab', 'cdef', 'ghijklmn', 'o', 'pq', 'rstuvwxyz']) buffer.push(Buffer.from(chunk))
    expect(buffer.result()).toEqual({ text: 'abcd\n[… 18 bytes omitted …]\nwxyz', bytes: 26, omittedBytes: 18 })
  })

  it('wraps the tail ring across many small chunks', () => {
    const buffer = new OutputBuffer(2, 5)
    const text = 'the quick brown fox jumps'
    for (const char of text) buffer.push(Buffer.from(char))
    expect(buffer.result().text).toBe(`th\n[… 18 bytes omitted …]\n${text.slice(-5)}`)
  })

  it('does not split a multi-byte character at a seam', () => {
    const buffer = new OutputBuffer(4, 3)
    buffer.push(Buffer.from('aaaé' + 'x'.repeat(10) + 'éé'))
    // The head ends with the first byte of an é and the tail starts with the last byte of
    // one: both broken halves are dropped.
    expect(buffer.result().text).toBe('aaa\n[… 12 bytes omitted …]\né')
  })

  it('can keep nothing and still count', () => {
    const buffer = new OutputBuffer(0, 0)
    buffer.push(Buffer.from('hello'))
    expect(buffer.result()).toEqual({ text: '\n[… 5 bytes omitted …]\n', bytes: 5, omittedBytes: 5 })
  })
})
