import { describe, expect, it } from 'vitest'
import { ProgressStream } from '../src/progress-stream'

describe('ProgressStream', () => {
  it('holds at most one capped message however much is pushed before it flushes', () => {
    const messages: string[] = []
    const stream = new ProgressStream((message) => messages.push(message))
    const chunk = Buffer.alloc(65536, 'y')
    // Synchronous pushes: the flush timer cannot run in between.
    for (let i = 0; i < 1024; i++) {
      stream.push(chunk)
      expect(stream['pendingBytes']).toBe(4096)
    }
    stream.close()
    expect(messages).toEqual([`${'y'.repeat(4096)}\n[… ${1024 * 65536 - 4096} bytes not shown …]\n`])
    // Closed: later output is ignored, not buffered.
    stream.push(chunk)
    expect(stream['pendingBytes']).toBe(0)
  })
})
