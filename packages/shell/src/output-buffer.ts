/** What a stream produced, bounded: the text kept and how much was left out of it. */
export interface CapturedOutput {
  /** The head and the tail of the output, with a marker where bytes were omitted. */
  text: string
  /** Bytes the stream produced in total. */
  bytes: number
  /** Bytes between the head and the tail that were drained but not kept. */
  omittedBytes: number
}

const decoder = new TextDecoder()

/**
 * Keeps the first `headBytes` and the last `tailBytes` of a stream in fixed buffers and
 * counts the rest, so an endless writer (`yes`) costs constant memory.
 */
export class OutputBuffer {
  bytes = 0
  private head: Buffer
  private headLength = 0
  private tail: Buffer
  private tailEnd = 0
  private tailLength = 0

  constructor(headBytes: number, tailBytes: number) {
    this.head = Buffer.allocUnsafe(headBytes)
    this.tail = Buffer.allocUnsafe(tailBytes)
  }

  push(chunk: Uint8Array): void {
    this.bytes += chunk.length
    let offset = 0
    if (this.headLength < this.head.length) {
      offset = Math.min(chunk.length, this.head.length - this.headLength)
      this.head.set(chunk.subarray(0, offset), this.headLength)
      this.headLength += offset
    }
    const capacity = this.tail.length
    if (offset === chunk.length || !capacity) return
    let rest = chunk.subarray(offset)
    if (rest.length > capacity) rest = rest.subarray(rest.length - capacity)
    const first = Math.min(rest.length, capacity - this.tailEnd)
    this.tail.set(rest.subarray(0, first), this.tailEnd)
    this.tail.set(rest.subarray(first), 0)
    this.tailEnd = (this.tailEnd + rest.length) % capacity
    this.tailLength = Math.min(capacity, this.tailLength + rest.length)
  }

  result(): CapturedOutput {
    const head = this.head.subarray(0, this.headLength)
    const tail = this.tailLength < this.tail.length
      ? this.tail.subarray(0, this.tailLength)
      : Buffer.concat([this.tail.subarray(this.tailEnd), this.tail.subarray(0, this.tailEnd)])
    const omittedBytes = this.bytes - this.headLength - this.tailLength
    const text = omittedBytes
      ? `${decoder.decode(trimIncompleteEnd(head))}\n[… ${omittedBytes} bytes omitted …]\n${decoder.decode(trimContinuationStart(tail))}`
      : decoder.decode(Buffer.concat([head, tail]))
    return { text, bytes: this.bytes, omittedBytes }
  }
}

// A cut can fall inside a multi-byte UTF-8 character; drop the broken piece instead of
// showing a replacement character at the seam.
function trimContinuationStart(bytes: Uint8Array): Uint8Array {
  let start = 0
  while (start < 3 && start < bytes.length && (bytes[start] & 0xc0) === 0x80) start++
  return bytes.subarray(start)
}

function trimIncompleteEnd(bytes: Uint8Array): Uint8Array {
  for (let back = 1; back <= 3 && back <= bytes.length; back++) {
    const byte = bytes[bytes.length - back]
    if ((byte & 0xc0) === 0x80) continue
    // A lead byte: keep it only if its whole sequence fits.
    const size = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1
    return size > back ? bytes.subarray(0, bytes.length - back) : bytes
  }
  return bytes
}
