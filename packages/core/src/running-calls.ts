/** What the registry tracks of a call while its handler runs. */
export interface RunningCall {
  /** Epoch milliseconds of the deadline; `Infinity` once it fired. */
  at: number
  /** True once the call has its final result. */
  settled: boolean
  /** The deadline passed. */
  fire(): void
}

/**
 * The calls whose handlers are running, with one timer for all their deadlines. A call is
 * pushed when it starts and merely counted out when it ends; the list is compacted when
 * mostly settled. The timer stays armed when the list empties, unreferenced. A Set (or a
 * `setTimeout`) per call would cost more than the rest of a fast call's pipeline.
 */
export class RunningCalls<T extends RunningCall> {
  private list: T[] = []
  private live = 0
  private timer: ReturnType<typeof setTimeout> | undefined
  private timerAt = Infinity

  add(call: T): void {
    this.list.push(call)
    if (++this.live === 1) this.timer?.ref?.()
    if (call.at < this.timerAt) this.arm(call.at)
  }

  /** Counts out a call that ended; call once per `add`. */
  done(): void {
    // While calls run, the timer keeps the process alive: a handler may wait for nothing
    // but its deadline's abort. Idle, it holds nothing open.
    if (--this.live === 0) this.timer?.unref?.()
    if (this.list.length > 64 && this.list.length > 4 * this.live) this.compact()
  }

  /** The calls still running. */
  active(): T[] {
    this.compact()
    return [...this.list]
  }

  /** Stops the timer and forgets every call; deadlines never fire. */
  clear(): void {
    this.list = []
    this.live = 0
    clearTimeout(this.timer)
    this.timer = undefined
    this.timerAt = Infinity
  }

  private compact() {
    this.list = this.list.filter((call) => !call.settled)
    this.live = this.list.length
    if (!this.live) this.timer?.unref?.()
  }

  private arm(at: number) {
    clearTimeout(this.timer)
    this.timerAt = at
    this.timer = setTimeout(() => this.tick(), Math.max(0, at - Date.now()))
    if (!this.live) this.timer.unref?.()
  }

  private tick() {
    this.timer = undefined
    this.timerAt = Infinity
    this.compact()
    const now = Date.now()
    let next = Infinity
    for (const call of [...this.list]) {
      if (call.at <= now) {
        call.at = Infinity
        call.fire()
      } else if (call.at < next) {
        next = call.at
      }
    }
    if (next < Infinity) this.arm(next)
  }
}
