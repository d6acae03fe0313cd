/** Milliseconds between two progress messages. */
const INTERVAL = 100
/** Bytes forwarded per message; the rest of a burst is counted, not sent. */
const MAX_BYTES = 4096

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

  constructor(private emit: (message: string) => void) {}

  push(chunk: Uint8Array): void {
    if (this.closed) return
    const room = MAX_BYTES - this.pendingBytes
    if (room > 0) {
      // Copy: the stream may reuse or retain the chunk's backing memory.
      const kept = Buffer.from(chunk.subarray(0, room))
      this.pending.push(kept)
      this.pendingBytes += kept.length
    }
    this.dropped += Math.max(0, chunk.length - Math.max(room, 0))
    this.timer ??= setTimeout(() => this.flush(), INTERVAL).unref()
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
