export interface ProgressStreamOptions {
  /** Milliseconds between two progress messages. @default 100 */
  interval?: number
  /** Bytes forwarded per message; the rest of a burst is counted, not sent. @default 4096 */
  maxBytes?: number
}

/**
 * Forwards a command's output to `call.progress` in coalesced, size-capped messages, so a
 * flood (`yes`) produces a few messages a second instead of one per pipe read. A failing
 * progress sink never affects the command.
 */
export class ProgressStream {
  private pending: Buffer[] = []
  private pendingBytes = 0
  private dropped = 0
  private timer: NodeJS.Timeout | undefined
  private decoder = new TextDecoder()
  private closed = false
  private interval: number
  private maxBytes: number

  constructor(private emit: (message: string) => void, options: ProgressStreamOptions = {}) {
    this.interval = options.interval ?? 100
    this.maxBytes = options.maxBytes ?? 4096
  }

  push(chunk: Uint8Array): void {
    if (this.closed) return
    const room = this.maxBytes - this.pendingBytes
    if (room > 0) {
      // Copy: the stream may reuse or retain the chunk's backing memory.
      const kept = Buffer.from(chunk.subarray(0, room))
      this.pending.push(kept)
      this.pendingBytes += kept.length
    }
    this.dropped += Math.max(0, chunk.length - Math.max(room, 0))
    this.timer ??= setTimeout(() => this.flush(), this.interval).unref()
  }

  /** Sends what is pending and stops. */
  close(): void {
    if (this.closed) return
    this.flush()
    this.closed = true
  }

  private flush() {
    clearTimeout(this.timer)
    this.timer = undefined
    if (!this.pendingBytes && !this.dropped) return
    let message = this.decoder.decode(Buffer.concat(this.pending), { stream: true })
    if (this.dropped) message += `\n[… ${this.dropped} bytes not shown …]\n`
    this.pending = []
    this.pendingBytes = 0
    this.dropped = 0
    try {
      this.emit(message)
    } catch {}
  }
}
