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

  it('retains at most the head and the tail however much goes through it', () => {
    const buffer = new OutputBuffer(1000, 3000)
    const head = buffer['head']
    const tail = buffer['tail']
    // 64 MiB in uneven chunks, the last byte of each naming its position.
    let total = 0
    let last = Buffer.alloc(0)
    for (let i = 0; total < 64 * 1024 * 1024; i++) {
      const chunk = Buffer.alloc(65536 + (i % 7) * 1013, 'a')
      chunk[chunk.length - 1] = 0x30 + (i % 10)
      buffer.push(chunk)
      total += chunk.length
      last = chunk
      // The same two fixed buffers, never grown or replaced.
      expect(buffer['head'] === head && buffer['tail'] === tail && head.length === 1000 && tail.length === 3000).toBe(true)
    }
    const result = buffer.result()
    expect(result.bytes).toBe(total)
    expect(result.omittedBytes).toBe(total - 4000)
    expect(result.text).toBe(`${'a'.repeat(1000)}\n[… ${total - 4000} bytes omitted …]\n${last.subarray(-3000).toString()}`)
  })
})
