/** Runs writes one after another, in call order; a failed write does not stop the next. */
export class WriteQueue {
  private tail: Promise<void> = Promise.resolve()

  push<T>(write: () => Promise<T>): Promise<T> {
    const next = this.tail.then(write)
    this.tail = next.then(() => {}, () => {})
    return next
  }

  /** Settles once every write pushed so far has. */
  flush(): Promise<void> {
    return this.tail
  }
}
