import { FsError } from './errors'
import { type FileChange, isFileChange } from './file-change'
import type { FileLocks } from './file-locks'
import { commitFile, currentDigest, removeFile } from './fs-backend'
import type { PathResolver } from './path-resolver'

/** What happened to one change in `ChangeLog.undo`. */
export interface UndoOutcome {
  id: string
  path?: string
  /**
   * `undone`; `conflict` (the file no longer holds what the change wrote; nothing touched);
   * `skipped` (an later change to the same path in this batch could not be undone);
   * `already_undone`; `unknown` (no such change id); `error` (the path is refused now, I/O).
   */
  status: 'undone' | 'conflict' | 'skipped' | 'already_undone' | 'unknown' | 'error'
  /** For `undone`: a created file was deleted, or a modified file got its prior content back. */
  action?: 'deleted' | 'restored'
  code?: FsError.Code
  message: string
}

export interface ChangeLogOptions {
  resolver: PathResolver
  locks: FileLocks
  /** Size limit for hashing the current file. */
  maxBytes: number
  /** Oldest changes are forgotten beyond this many; persisted artifacts can be `add`ed back. @default 1000 */
  maxEntries?: number
}

/**
 * The file changes made by `write` and `edit`, and their undo. Undo goes through the same
 * resolver and per-file lock as the tools, and restores only when the file still has the
 * exact content (SHA-256) the change produced.
 */
export class ChangeLog {
  private changes = new Map<string, FileChange>()
  private maxEntries: number

  constructor(private options: ChangeLogOptions) {
    this.maxEntries = options.maxEntries ?? 1000
  }

  /** @internal Called by the tools. */
  record(change: FileChange): void {
    this.changes.set(change.id, change)
    if (this.changes.size > this.maxEntries) this.changes.delete(this.changes.keys().next().value!)
  }

  /**
   * Loads changes back from persisted artifacts (e.g. after a restart), oldest first, so
   * they can be undone by id. Known ids are left as they are.
   */
  add(changes: Iterable<unknown>): void {
    for (const change of changes) {
      if (!isFileChange(change)) throw new FsError('INVALID_ARGUMENT', 'ChangeLog.add() expects file_change artifacts')
      if (!this.changes.has(change.id)) this.record(change)
    }
  }

  get(id: string): FileChange | undefined {
    return this.changes.get(id)
  }

  /** Changes in the order they were made, optionally for one session or path. */
  list(filter: { sessionId?: string; path?: string } = {}): FileChange[] {
    return [...this.changes.values()].filter((change) =>
      (filter.sessionId === undefined || change.sessionId === filter.sessionId)
      && (filter.path === undefined || change.path === filter.path))
  }

  /**
   * Undoes changes, newest first (so create-then-edit ends with the file deleted). A change
   * whose file no longer matches its `after` digest is a `conflict` and is left alone, and
   * older changes to that path in the batch are `skipped`; other paths go on.
   */
  async undo(ids: string | Iterable<string>): Promise<UndoOutcome[]> {
    const wanted = new Set(typeof ids === 'string' ? [ids] : ids)
    const order = [...this.changes.keys()]
    const batch = [...wanted].sort((a, b) => order.indexOf(b) - order.indexOf(a))
    const blocked = new Set<string>()
    const outcomes: UndoOutcome[] = []
    for (const id of batch) {
      const change = this.changes.get(id)
      if (!change) {
        outcomes.push({ id, status: 'unknown', code: 'UNKNOWN_CHANGE', message: `no change with id ${JSON.stringify(id)}` })
        continue
      }
      const base = { id, path: change.path }
      if (change.undone) {
        outcomes.push({ ...base, status: 'already_undone', message: `${change.path}: this change was already undone` })
      } else if (blocked.has(change.path)) {
        outcomes.push({ ...base, status: 'skipped', message: `${change.path}: a later change to this file could not be undone` })
      } else {
        const outcome = await this.undoOne(change)
        if (outcome.status !== 'undone') blocked.add(change.path)
        outcomes.push(outcome)
      }
    }
    return outcomes
  }

  private async undoOne(change: FileChange): Promise<UndoOutcome> {
    const base = { id: change.id, path: change.path }
    try {
      const path = await this.options.resolver.resolve(change.path, undefined, { access: 'write', intent: 'create', expect: 'file' })
      return await this.options.locks.run(path.target, async () => {
        const digest = await currentDigest(path, this.options.maxBytes)
        if (digest !== change.after) {
          const state = digest === null ? 'no longer exists' : 'was changed since'
          return { ...base, status: 'conflict', code: 'CONFLICT', message: `${change.path} ${state}; undo would overwrite that, so nothing was touched` } satisfies UndoOutcome
        }
        // The created file is deleted only while it is still the file just hashed (not a link
        // or another file put in its place since): otherwise this is a conflict too.
        if (change.type === 'created' && !await removeFile(path, change.after)) {
          return { ...base, status: 'conflict', code: 'CONFLICT', message: `${change.path} was replaced since; undo would delete that, so nothing was touched` } satisfies UndoOutcome
        }
        if (change.type !== 'created') await commitFile(path, change.prior!)
        change.undone = true
        const action = change.type === 'created' ? 'deleted' : 'restored'
        return { ...base, status: 'undone', action, message: `${change.path}: ${action}` } satisfies UndoOutcome
      })
    } catch (error) {
      if (!FsError.is(error)) throw error
      return { ...base, status: 'error', code: error.code, message: error.message }
    }
  }
}
