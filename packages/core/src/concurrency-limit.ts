/** Caps how many calls of one tool run at once, across all sessions and batches. */
export class ConcurrencyLimit {
  private running = 0
  private waiting: (() => void)[] = []

  constructor(public readonly limit: number) {}

  /** Resolves when a slot is free; `undefined` means a slot was free at once. */
  acquire(signal?: AbortSignal): Promise<void> | undefined {
    if (this.running < this.limit) {
      this.running++
      return
    }
    return new Promise<void>((resolve, reject) => {
      const wake = () => {
        signal?.removeEventListener('abort', onAbort)
        this.running++
        resolve()
      }
      const onAbort = () => {
        const index = this.waiting.indexOf(wake)
        if (index >= 0) this.waiting.splice(index, 1)
        reject(signal!.reason)
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      this.waiting.push(wake)
    })
  }

  release(): void {
    this.running--
    const next = this.waiting.shift()
    if (next) next()
  }
}
