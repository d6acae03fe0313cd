import { randomUUID } from 'node:crypto'
import { structuredPatch } from 'diff'
import type { ToolArtifact } from '@dogu/core'
import { type Committed, type FileIdentity, type TextFile, sha256 } from './fs-backend'

/** One hunk of a unified diff with three lines of context. `lines` start with ` `, `+`, `-` or `\`. */
export interface DiffHunk {
  oldStart: number
  oldLines: number
  newStart: number
  newLines: number
  lines: string[]
}

/**
 * The `file_change` artifact a successful `write` or `edit` returns. It carries everything a
 * host needs to show the exact diff later and to undo it, without reading the disk again.
 */
export interface FileChange extends ToolArtifact {
  kind: 'file_change'
  /** The change id, used by `ChangeLog.undo`. */
  id: string
  /** Relative to the workspace root, with `/`. */
  path: string
  type: 'created' | 'modified'
  added: number
  removed: number
  hunks: DiffHunk[]
  /** SHA-256 (hex) of the bytes before the change; `null` for a created file. */
  before: string | null
  after: string
  /** The content before the change, for undo; `null` for a created file. */
  prior: string | null
  /**
   * The file the change wrote (device and inode): undo acts only on this very file, not on
   * another one (or a link) put at the path since, whatever its content. Undoing a later
   * change to the path moves it to the file that undo put back. Absent in artifacts from
   * before it was recorded; undo then checks the content and that no link is on the path.
   */
  written?: FileIdentity
  /** The file the change replaced, for a modified file (see `written`). */
  replaced?: FileIdentity
  /** The tool (as named in the toolset), call and session that made it. */
  tool: string
  callId?: string
  sessionId?: string
  /** Epoch milliseconds. */
  createdAt: number
  /** Set once the change has been undone. */
  undone?: boolean
}

export interface ChangeSource {
  tool: string
  callId?: string
  sessionId?: string
}

/** Builds the artifact for replacing `prior` (the file as read, or nothing) with `next` at `path`; `committed` names the files. */
export function createFileChange(path: string, prior: TextFile | null, next: string, source: ChangeSource, committed?: Committed): FileChange {
  const patch = structuredPatch(path, path, prior?.text ?? '', next, undefined, undefined, { context: 3 })
  let added = 0
  let removed = 0
  const hunks = patch.hunks.map((hunk) => {
    for (const line of hunk.lines) {
      if (line[0] === '+') added++
      else if (line[0] === '-') removed++
    }
    return { oldStart: hunk.oldStart, oldLines: hunk.oldLines, newStart: hunk.newStart, newLines: hunk.newLines, lines: hunk.lines }
  })
  const change: FileChange = {
    kind: 'file_change',
    id: randomUUID(),
    path,
    type: prior === null ? 'created' : 'modified',
    added,
    removed,
    hunks,
    before: prior?.digest ?? null,
    after: sha256(next),
    prior: prior?.text ?? null,
    tool: source.tool,
    createdAt: Date.now(),
  }
  if (committed) change.written = committed.written
  if (committed?.replaced && prior !== null) change.replaced = committed.replaced
  if (source.callId !== undefined) change.callId = source.callId
  if (source.sessionId !== undefined) change.sessionId = source.sessionId
  return change
}

/** Whether a value has the shape of a `file_change` artifact (for artifacts loaded back from storage). */
export function isFileChange(value: unknown): value is FileChange {
  if (!value || typeof value !== 'object') return false
  const change = value as FileChange
  return change.kind === 'file_change' && typeof change.id === 'string' && typeof change.path === 'string'
    && (change.type === 'created' || change.type === 'modified') && typeof change.after === 'string'
    && (change.type === 'created' ? change.prior === null : typeof change.prior === 'string')
    && (change.written === undefined || isIdentity(change.written)) && (change.replaced === undefined || isIdentity(change.replaced))
}

function isIdentity(value: unknown): value is FileIdentity {
  const identity = value as FileIdentity
  return !!identity && typeof identity === 'object' && typeof identity.dev === 'string' && typeof identity.ino === 'string'
    && /^\d+$/.test(identity.dev) && /^\d+$/.test(identity.ino) && (identity.ctime === undefined || (typeof identity.ctime === 'string' && /^\d+$/.test(identity.ctime)))
}
