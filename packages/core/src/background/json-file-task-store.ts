import { writeFileAtomically } from '../write-file-atomically'
import { DoguError } from '../errors'
import { type Logger, silentLogger } from '../logger'
import { type BackgroundTask, isBackgroundTask } from './background-task'
import type { TaskStore } from './task-store'

type Fs = typeof import('node:fs/promises')

const FORMAT_VERSION = 1
/** The last write per file, across instances: a reloaded service reads after the old one wrote. */
const lastWrites = new Map<string, Promise<void>>()

export interface JsonFileTaskStoreOptions {
  /** Where a corrupt file and dropped records are reported. */
  logger?: Logger
}

/**
 * Task records in one JSON file. Every write goes to a temporary file in the same
 * directory, is synced, then renamed over the old file, so a crash leaves either the old
 * or the new file, never half of one. Writes are coalesced: while one is in flight, later
 * changes wait and go out together in the next.
 *
 * A file that cannot be read as a task list is moved aside (`<file>.corrupt-<time>`) and
 * reported, and the store starts from the records it could read. Node only: `node:fs` is
 * imported when the store is first used, so browsers may load `@dogu/core` without it.
 */
export class JsonFileTaskStore implements TaskStore {
  private records = new Map<string, BackgroundTask>()
  private loaded = false
  private logger: Logger
  private writing: Promise<void> | undefined
  private queued: Promise<void> | undefined
  private fs: Promise<Fs> | undefined

  constructor(public readonly path: string, options: JsonFileTaskStoreOptions = {}) {
    if (typeof path !== 'string' || !path) throw new DoguError('INVALID_OPTIONS', 'JsonFileTaskStore needs a file path')
    this.logger = options.logger ?? silentLogger
  }

  async load(): Promise<BackgroundTask[]> {
    await lastWrites.get(this.path)?.catch(() => {})
    const fs = await this.node()
    let text: string | undefined
    try {
      text = await fs.readFile(this.path, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
    this.records.clear()
    if (text !== undefined) {
      const { tasks, problem } = parse(text)
      for (const task of tasks) this.records.set(task.id, task)
      if (problem) await this.moveAside(fs, problem)
    }
    this.loaded = true
    return [...this.records.values()]
  }

  put(task: BackgroundTask): Promise<void> {
    this.assertLoaded()
    this.records.set(task.id, task)
    return this.schedule()
  }

  delete(ids: readonly string[]): Promise<void> {
    this.assertLoaded()
    let changed = false
    for (const id of ids) changed = this.records.delete(id) || changed
    return changed ? this.schedule() : this.flush()
  }

  async flush(): Promise<void> {
    // Failures were already reported to whoever made the change; flush only waits.
    await this.queued?.catch(() => {})
    await this.writing?.catch(() => {})
  }

  private assertLoaded() {
    // Writing before reading would replace the file with only the new records.
    if (!this.loaded) throw new DoguError('INACTIVE', `task store ${this.path} is written before load()`)
  }

  private schedule(): Promise<void> {
    if (this.queued) return this.queued
    if (!this.writing) return this.start()
    const next = () => {
      this.queued = undefined
      return this.start()
    }
    return this.queued = this.writing.then(next, next)
  }

  private start(): Promise<void> {
    const writing = this.write().finally(() => {
      if (this.writing === writing) this.writing = undefined
      if (lastWrites.get(this.path) === writing) lastWrites.delete(this.path)
    })
    lastWrites.set(this.path, writing)
    return this.writing = writing
  }

  private async write() {
    const text = JSON.stringify({ version: FORMAT_VERSION, tasks: [...this.records.values()] })
    await writeFileAtomically(this.path, text)
  }

  private async moveAside(fs: Fs, problem: string) {
    const aside = `${this.path}.corrupt-${Date.now()}`
    try {
      await fs.rename(this.path, aside)
      this.logger.warn('background task store %s %s; moved it aside to %s and kept %d readable task(s)', this.path, problem, aside, this.records.size)
    } catch (error) {
      this.logger.warn('background task store %s %s, and moving it aside failed: %s', this.path, problem, error)
    }
  }

  private node() {
    return this.fs ??= import('node:fs/promises')
  }
}

function parse(text: string): { tasks: BackgroundTask[]; problem?: string } {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return { tasks: [], problem: `is not valid JSON (${(error as Error).message})` }
  }
  const file = value as { version?: unknown; tasks?: unknown }
  if (!file || typeof file !== 'object' || !Array.isArray(file.tasks)) {
    return { tasks: [], problem: 'does not hold a task list' }
  }
  if (file.version !== FORMAT_VERSION) {
    return { tasks: [], problem: `has format version ${JSON.stringify(file.version)}, expected ${FORMAT_VERSION}` }
  }
  const tasks = file.tasks.filter(isBackgroundTask)
  const dropped = file.tasks.length - tasks.length
  return dropped ? { tasks, problem: `held ${dropped} invalid record(s)` } : { tasks }
}
