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

  constructor(private poolSize: number) {}

  schedule<T>(parallel: boolean, task: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve) => {
      const job: Job = {
        parallel,
        start: () => {
          this.running++
          if (!parallel) this.exclusive = true
          task().then(resolve).finally(() => {
            this.running--
            if (!parallel) this.exclusive = false
            this.drain()
          })
        },
      }
      this.queue.push(job)
      this.drain()
    })
  }

  private drain() {
    while (this.queue.length) {
      const job = this.queue[0]
      const free = job.parallel
        ? !this.exclusive && this.running < this.poolSize
        : this.running === 0
      if (!free) return
      this.queue.shift()
      job.start()
    }
  }
}
