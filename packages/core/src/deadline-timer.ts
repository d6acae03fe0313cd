export interface Deadline {
  at: number
  fire(): void
}

/**
 * One timer for many deadlines. A call adds its deadline and removes it when it ends;
 * a `setTimeout` per call would cost more than the rest of a trivial call's pipeline.
 */
export class DeadlineTimer {
  private pending = new Set<Deadline>()
  private timer: ReturnType<typeof setTimeout> | undefined
  private timerAt = Infinity

  add(deadline: Deadline): void {
    this.pending.add(deadline)
    if (deadline.at < this.timerAt) this.arm(deadline.at)
  }

  delete(deadline: Deadline): void {
    this.pending.delete(deadline)
    if (!this.pending.size) this.disarm()
  }

  /** Stops the timer; pending deadlines never fire. */
  clear(): void {
    this.pending.clear()
    this.disarm()
  }

  private arm(at: number) {
    clearTimeout(this.timer)
    this.timerAt = at
    this.timer = setTimeout(() => this.tick(), Math.max(0, at - Date.now()))
  }

  private disarm() {
    clearTimeout(this.timer)
    this.timer = undefined
    this.timerAt = Infinity
  }

  private tick() {
    this.timer = undefined
    this.timerAt = Infinity
    const now = Date.now()
    let next = Infinity
    for (const deadline of this.pending) {
      if (deadline.at <= now) {
        this.pending.delete(deadline)
        deadline.fire()
      } else if (deadline.at < next) {
        next = deadline.at
      }
    }
    if (next < Infinity && this.pending.size) this.arm(next)
  }
}
