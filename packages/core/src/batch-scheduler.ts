interface Job {
  parallel: boolean
  start(): void
}

/**
 * The read/write gate of one batch: parallel-safe calls run together up to `poolSize`;
 * a non-parallel call waits for the running ones and runs alone. Jobs start in call order
 * (a waiting exclusive call holds back the parallel calls behind it), so a read the model
 * asked for after a write sees that write.
 */
export class BatchScheduler {
  private running = 0
  private exclusive = false
  private queue: Job[] = []
  /** Index of the next job to start: the queue only grows within a batch. */
  private head = 0

  constructor(private poolSize: number) {}

  schedule<T>(parallel: boolean, task: () => Promise<T>): Promise<T> {
    // Nothing waiting and room to run: start now, without a queue entry.
    if (this.head === this.queue.length && this.free(parallel)) return this.start(parallel, task)
    return new Promise<T>((resolve) => {
      this.queue.push({ parallel, start: () => resolve(this.start(parallel, task)) })
    })
  }

  private free(parallel: boolean) {
    return parallel ? !this.exclusive && this.running < this.poolSize : this.running === 0
  }

  private start<T>(parallel: boolean, task: () => Promise<T>): Promise<T> {
    this.running++
    if (!parallel) this.exclusive = true
    const done = () => {
      this.running--
      if (!parallel) this.exclusive = false
      this.drain()
    }
    const promise = task()
    promise.then(done, done)
    return promise
  }

  private drain() {
    while (this.head < this.queue.length) {
      const job = this.queue[this.head]
      if (!this.free(job.parallel)) return
      this.queue[this.head++] = undefined!
      job.start()
    }
  }
}
