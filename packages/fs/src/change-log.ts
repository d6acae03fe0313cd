import { lstat, readlink } from 'node:fs/promises'
import { join } from 'node:path'
import { FsError } from './errors'
import { type FileChange, isFileChange } from './file-change'
import type { FileLocks } from './file-locks'
import { type FileIdentity, type Mismatch, removeFile, restoreFile } from './fs-backend'
import type { PathResolver } from './path-resolver'

/** What happened to one change in `ChangeLog.undo`. */
export interface UndoOutcome {
  id: string
  path?: string
  /**
   * `undone`; `conflict` (the path no longer holds the very file the change wrote: other
   * content, `CONFLICT`, or a link or another file in its place, `REPLACED`; nothing touched);
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
 * resolver and per-file lock as the tools, and acts only on the very file the change wrote:
 * reached with no symbolic link at the path or on the way, the same file (device, inode, ctime)
 * as recorded at the change, with the exact content (SHA-256) the change produced.
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
    const conflict = (code: 'CONFLICT' | 'REPLACED', message: string): UndoOutcome => ({ ...base, status: 'conflict', code, message })
    try {
      const path = await this.options.resolver.resolve(change.path, undefined, { access: 'write', intent: 'create', expect: 'file' })
      // The resolver follows links; undo may not. The path must lead to itself, the change's
      // own (canonical) path, with no link at its end or on the way.
      if (path.target !== change.path) return conflict('REPLACED', await this.linkedMessage(change.path, path.target))
      return await this.options.locks.run(path.target, async () => {
        const expected = { digest: change.after, ...(change.written ? { identity: change.written } : {}) }
        const done = change.type === 'created'
          ? await removeFile(path, expected, this.options.maxBytes)
          : await restoreFile(path, change.prior!, expected, this.options.maxBytes)
        if (typeof done === 'string') return conflict(done === 'link' || done === 'replaced' ? 'REPLACED' : 'CONFLICT', mismatchMessage(change.path, done))
        if (done !== true) this.restored(change, done)
        change.undone = true
        const action = change.type === 'created' ? 'deleted' : 'restored'
        return { ...base, status: 'undone', action, message: `${change.path}: ${action}` } satisfies UndoOutcome
      })
    } catch (error) {
      if (!FsError.is(error)) throw error
      return { ...base, status: 'error', code: error.code, message: error.message }
    }
  }

  /**
   * Undo of `change` put its prior content back in a new file, `identity`. The change before
   * it at that path, if it wrote the file `change` replaced, now finds its content in that new
   * file, so it can still be undone.
   */
  private restored(change: FileChange, identity: FileIdentity): void {
    const older = [...this.changes.values()]
    const earlier = older.slice(0, older.indexOf(change)).reverse().find((other) => other.path === change.path && !other.undone)
    if (!earlier?.written || !change.replaced) return
    const { dev, ino, ctime } = earlier.written
    if (dev === change.replaced.dev && ino === change.replaced.ino && (ctime === undefined || ctime === change.replaced.ctime) && earlier.after === change.before) earlier.written = identity
  }

  /** Why a path that leads elsewhere is refused: a link at its end (and where it points), or on the way. */
  private async linkedMessage(rel: string, target: string): Promise<string> {
    const at = join(this.options.resolver.workspace, rel)
    const link = await lstat(at).then((info) => info.isSymbolicLink() ? readlink(at) : undefined, () => undefined)
    const what = link !== undefined ? `is now a symbolic link (to ${link}), not` : `now leads to ${target} through a symbolic link, not to`
    return `${rel} ${what} the file this change wrote; undo never acts through a link, so nothing was touched`
  }
}

function mismatchMessage(rel: string, mismatch: Mismatch): string {
  switch (mismatch) {
    case 'missing': return `${rel} no longer exists; undo would overwrite that, so nothing was touched`
    case 'link': return `${rel} is now a symbolic link, not the file this change wrote; undo never acts through a link, so nothing was touched`
    case 'replaced': return `${rel} is not the file this change wrote: another file, or a link to one, is in its place (the same content is not enough), or its metadata changed since (chmod, a hard link); nothing was touched`
    case 'not_file':
    case 'content': return `${rel} was changed since; undo would overwrite that, so nothing was touched`
  }
}
