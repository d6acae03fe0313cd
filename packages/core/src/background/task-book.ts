import { type BackgroundTask, isBackgroundTask } from './background-task'
import { type RetentionLimits, selectEvictions } from './retention'

const NONE: readonly string[] = Object.freeze([])

/**
 * The tasks a background engine knows, in memory: every record in the order the tasks
 * started (what `list()` gives), the settled ones also in the order they settled (what
 * retention evicts first). Running tasks are never evicted. Memory is authoritative; the
 * engine writes what changes here to its store.
 */
export class TaskBook {
  private tasks = new Map<string, BackgroundTask>()
  /** Settled tasks, oldest-settled first: eviction order. Settled records never change. */
  private settled = new Map<string, BackgroundTask>()

  constructor(private readonly limits: Readonly<RetentionLimits>) {}

  get size(): number {
    return this.tasks.size
  }

  get(id: string): BackgroundTask | undefined {
    return this.tasks.get(id)
  }

  has(id: string): boolean {
    return this.tasks.has(id)
  }

  /** Every task, in the order they started. */
  values(): IterableIterator<BackgroundTask> {
    return this.tasks.values()
  }

  /** A task that started running here. */
  start(task: BackgroundTask): void {
    this.tasks.set(task.id, task)
  }

  /** A task that settled here, or was cut off: its record is final. */
  settle(task: BackgroundTask): void {
    this.tasks.set(task.id, task)
    this.settled.set(task.id, task)
  }

  /**
   * Takes in a store's records as a start reads them: in the order they started, those
   * stored as `running` cut off by the restart (`interrupted` at `now`). Returns those, to
   * be written back so.
   */
  load(records: readonly BackgroundTask[], now: number): BackgroundTask[] {
    const sorted = [...records].sort((a, b) => a.startedAt - b.startedAt)
    const settled: BackgroundTask[] = []
    const cutOff: BackgroundTask[] = []
    for (let task of sorted) {
      if (task.status === 'running') {
        task = Object.freeze({ ...task, status: 'interrupted', settledAt: now })
        cutOff.push(task)
      } else {
        task = Object.freeze({ ...task })
      }
      this.tasks.set(task.id, task)
      settled.push(task)
    }
    settled.sort((a, b) => (a.settledAt ?? a.startedAt) - (b.settledAt ?? b.startedAt))
    for (const task of settled) this.settled.set(task.id, task)
    return cutOff
  }

  /**
   * Takes in a new store's records: what it holds that is not known here, running ones as
   * cut off. Ids whose record the store must be given (ours, or the cut-off one) go into
   * `dirty`. Returns the tasks it cut off.
   */
  merge(records: readonly BackgroundTask[], runningHere: (id: string) => boolean, dirty: Set<string>, now: number): BackgroundTask[] {
    const cutOff: BackgroundTask[] = []
    let changed = false
    let added = false
    for (const record of records) {
      if (!isBackgroundTask(record) || runningHere(record.id)) continue
      const current = this.tasks.get(record.id)
      // A settled record here is final; the store gets it back.
      if (current && current.status !== 'running') {
        if (record.status !== current.status || record.settledAt !== current.settledAt) dirty.add(record.id)
        continue
      }
      const task = record.status === 'running'
        ? Object.freeze({ ...record, status: 'interrupted' as const, settledAt: now })
        : Object.freeze({ ...record })
      if (record.status === 'running') {
        dirty.add(task.id)
        cutOff.push(task)
      }
      if (!current) added = true
      this.tasks.set(task.id, task)
      this.settled.delete(task.id)
      this.settled.set(task.id, task)
      changed = true
    }
    if (changed) this.sortSettled()
    if (added) this.sortTasks()
    return cutOff
  }

  /**
   * Takes in what other instances wrote to a shared store: their new tasks, their settled
   * ones, and those whose instance stopped renewing its lease. Tasks running here are never touched.
   */
  follow(records: readonly BackgroundTask[], runningHere: (id: string) => boolean): void {
    let changed = false
    let added = false
    for (const record of records) {
      if (!isBackgroundTask(record) || runningHere(record.id)) continue
      const current = this.tasks.get(record.id)
      if (current && current.status === record.status && current.settledAt === record.settledAt) continue
      // A settled record is final: an older view of it (`running`) never replaces it.
      if (current && current.status !== 'running' && record.status === 'running') continue
      const task = Object.freeze({ ...record })
      if (!current) added = true
      this.tasks.set(task.id, task)
      if (task.status !== 'running') {
        this.settled.delete(task.id)
        this.settled.set(task.id, task)
        changed = true
      }
    }
    // Eviction reads `settled` oldest-settled first; others' records arrive in any order.
    if (changed) this.sortSettled()
    if (added) this.sortTasks()
  }

  /** Forgets what the retention limits no longer allow; returns the ids forgotten. */
  evict(): readonly string[] {
    const oldest = this.settled.values().next().value
    if (!oldest) return NONE
    const now = Date.now()
    // The common case, checked without building anything: nothing to evict.
    if (this.tasks.size <= this.limits.maxTasks && now - (oldest.settledAt ?? oldest.startedAt) <= this.limits.maxAgeMs) return NONE
    const evicted = selectEvictions(this.settled.values(), this.tasks.size, this.limits, now)
    for (const id of evicted) {
      this.tasks.delete(id)
      this.settled.delete(id)
    }
    return evicted
  }

  /** `list()` gives tasks in the order they started; records taken from a store arrive in its order. */
  private sortTasks() {
    this.tasks = new Map([...this.tasks].sort(([, a], [, b]) => a.startedAt - b.startedAt))
  }

  private sortSettled() {
    const sorted = [...this.settled.values()].sort((a, b) => (a.settledAt ?? a.startedAt) - (b.settledAt ?? b.startedAt))
    this.settled = new Map(sorted.map((task) => [task.id, task]))
  }
}
