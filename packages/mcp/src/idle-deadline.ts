/**
 * A deadline that passes after `ms` without news: `touch` (progress arrived) restarts it, and
 * while something is `hold`ing it (a person answering the server's elicitation) it does not
 * run at all. When it passes, `signal` aborts with `reason()`.
 */
export class IdleDeadline {
  private controller = new AbortController()
  private timer: ReturnType<typeof setTimeout> | undefined
  private holds = 0
  private disposed = false

  constructor(private ms: number, private reason: () => unknown) {
    this.arm()
  }

  get signal(): AbortSignal {
    return this.controller.signal
  }

  get expired(): boolean {
    return this.controller.signal.aborted
  }

  /** Restarts the count, unless held. */
  touch(): void {
    if (!this.holds) this.arm()
  }

  /** Stops the count until the returned release is called (once; later calls do nothing), then restarts it. */
  hold(): () => void {
    this.holds++
    clearTimeout(this.timer)
    let released = false
    return () => {
      if (released) return
      released = true
      if (--this.holds === 0) this.arm()
    }
  }

  dispose(): void {
    this.disposed = true
    clearTimeout(this.timer)
  }

  private arm() {
    clearTimeout(this.timer)
    if (this.disposed || this.expired) return
    this.timer = setTimeout(() => this.controller.abort(this.reason()), this.ms)
  }
}
