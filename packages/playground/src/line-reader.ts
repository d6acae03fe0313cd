import type { Interface } from 'node:readline'

/**
 * Lines of a readline interface, one `read()` at a time. Commands and the answers to
 * permission questions come from the same input, so both take lines from this one queue:
 * piped input (`printf 'call …\ny\n' | yarn start`) answers a question with its next line.
 */
export class LineReader {
  private lines: string[] = []
  private waiters: ((line: string | undefined) => void)[] = []
  private closed = false

  constructor(rl: Interface) {
    rl.on('line', (line) => {
      const waiter = this.waiters.shift()
      if (waiter) waiter(line)
      else this.lines.push(line)
    })
    rl.on('close', () => {
      this.closed = true
      for (const waiter of this.waiters.splice(0)) waiter(undefined)
    })
  }

  /**
   * The next line; `undefined` once the input has ended. Rejects when `signal` aborts.
   * `first`: this read takes the next line before reads already waiting (a question asked
   * while the prompt waits for a command gets its answer, not the prompt).
   */
  read(signal?: AbortSignal, { first = false } = {}): Promise<string | undefined> {
    if (this.lines.length) return Promise.resolve(this.lines.shift())
    if (this.closed) return Promise.resolve(undefined)
    if (signal?.aborted) return Promise.reject(signal.reason)
    return new Promise((resolve, reject) => {
      const waiter = (line: string | undefined) => {
        signal?.removeEventListener('abort', onAbort)
        resolve(line)
      }
      // An abandoned read must not swallow the line after it.
      const onAbort = () => {
        this.waiters = this.waiters.filter((other) => other !== waiter)
        reject(signal!.reason)
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      if (first) this.waiters.unshift(waiter)
      else this.waiters.push(waiter)
    })
  }
}
