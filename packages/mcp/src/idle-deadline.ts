/**
 * A deadline that passes after `ms` without news: `touch` (progress arrived) restarts it, and
 * while something is `hold`ing it (a person answering the server's elicitation) it does not
 * run at all. When it passes, `signal` aborts with `reason()`; it also aborts with the
 * `parent` signal (the call's), so one signal serves the request: `AbortSignal.any` costs a
 * call a few microseconds and weak references for the collector, on every call.
 */
export class IdleDeadline {
  private controller = new AbortController()
  private timer: ReturnType<typeof setTimeout> | undefined
  private holds = 0
  private disposed = false
  private passed = false
  private readonly onParentAbort: (() => void) | undefined

  constructor(private ms: number, private reason: () => unknown, private readonly parent?: AbortSignal) {
    if (parent?.aborted) this.controller.abort(parent.reason)
    else if (parent) {
      this.onParentAbort = () => this.controller.abort(parent.reason)
      parent.addEventListener('abort', this.onParentAbort, { once: true })
    }
    this.arm()
  }

  get signal(): AbortSignal {
    return this.controller.signal
  }

  /** Whether the deadline itself passed (not the parent's abort). */
  get expired(): boolean {
    return this.passed
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
    if (this.onParentAbort) this.parent?.removeEventListener('abort', this.onParentAbort)
  }

  private arm() {
    clearTimeout(this.timer)
    if (this.disposed || this.controller.signal.aborted) return
    this.timer = setTimeout(() => {
      this.passed = true
      this.controller.abort(this.reason())
    }, this.ms)
  }
}
