import { describe, expect, it } from 'vitest'
import { readSse } from '../src/sse'

/** A body that delivers `chunks` (strings as UTF-8, or raw bytes) one read at a time. */
function body(chunks: (string | Uint8Array)[]) {
  const encoder = new TextEncoder()
  let cancelled = 0
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks.shift()
      if (next === undefined) controller.close()
      else controller.enqueue(typeof next === 'string' ? encoder.encode(next) : next)
    },
    cancel() { cancelled++ },
  })
  return { stream, cancelled: () => cancelled }
}

async function collect(chunks: (string | Uint8Array)[]) {
  const events: string[] = []
  for await (const data of readSse(body(chunks).stream)) events.push(data)
  return events
}

describe('readSse', () => {
  it('reads events whatever the line ends and chunk borders, skipping comments and other fields', async () => {
    expect(await collect([': keep-alive\n\n', 'event: x\r\ndata: {"a":1}\r', '\n\r\ndata:b\ndata: c\n', '\n', 'data: last'])).toEqual(['{"a":1}', 'b\nc', 'last'])
  })

  it('keeps a character split between two chunks whole', async () => {
    const bytes = new TextEncoder().encode('data: 巴黎\n\n')
    expect(await collect([bytes.subarray(0, 7), bytes.subarray(7, 8), bytes.subarray(8)])).toEqual(['巴黎'])
  })

  it('cancels the body when the reader leaves early, and only then', async () => {
    const early = body(['data: 1\n\n', 'data: 2\n\n'])
    for await (const data of readSse(early.stream)) {
      expect(data).toBe('1')
      break
    }
    expect(early.cancelled()).toBe(1)
    const whole = body(['data: 1\n\n'])
    for await (const _ of readSse(whole.stream)) { /* read to the end */ }
    expect(whole.cancelled()).toBe(0)
  })
})
