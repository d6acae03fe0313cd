import type { ToolCall } from '@dogu/core'
import type { CheckedPath } from './checked-path'
import { FsError } from './errors'
import { type FileChange, createFileChange } from './file-change'
import { type TextFile, commitFile, currentDigest, readTextFile } from './fs-backend'
import type { FsContext } from './fs-context'

/**
 * The current text of a file that write/edit may replace, or `null` when there is none.
 * Replacing needs a readable UTF-8 text file within the write limit, so the change can be
 * shown and undone.
 */
export async function readReplaceable(context: FsContext, path: CheckedPath, verb: string): Promise<TextFile | null> {
  try {
    return await readTextFile(path, context.limits.writeBytes)
  } catch (error) {
    if (FsError.is(error, 'NOT_FOUND')) return null
    if (FsError.is(error, 'TOO_LARGE') || FsError.is(error, 'BINARY') || FsError.is(error, 'INVALID_UTF8')) {
      throw new FsError(error.code, `${error.message}; ${verb} only replaces UTF-8 text files (so the change can be undone)`)
    }
    throw error
  }
}

/**
 * Commits `next` over `prior` (read under the file's lock) if the file still has the digest
 * it had when read, then records and returns the file-change artifact.
 */
export async function commitChange(context: FsContext, path: CheckedPath, prior: TextFile | null, next: string, call: ToolCall): Promise<FileChange> {
  if (Buffer.byteLength(next) > context.limits.writeBytes) {
    throw new FsError('TOO_LARGE', `the new content of ${path.display} would be ${Buffer.byteLength(next)} bytes, over the ${context.limits.writeBytes} byte limit`)
  }
  call.progress(`checking ${path.display} for changes since it was read`)
  const digest = await currentDigest(path, context.limits.writeBytes)
  if (digest !== (prior?.digest ?? null)) {
    throw new FsError('STALE', `${path.display} changed on disk after it was read (another program wrote it); nothing was written. Read it again and redo the change.`)
  }
  const committed = await commitFile(path, next)
  const change = createFileChange(path.target, prior, next, { tool: call.name, callId: call.id, sessionId: call.session.id }, committed)
  context.changes.record(change)
  return change
}

/** `+3 -1 lines` */
export function lineCounts(change: FileChange): string {
  return `+${change.added} -${change.removed} line${change.added + change.removed === 1 ? '' : 's'}`
}
