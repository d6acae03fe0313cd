import type { ToolCall } from '@dogu/core'
import type { ChangeLog } from './change-log'
import type { CheckedPath } from './checked-path'
import { FsError } from './errors'
import type { FileLocks } from './file-locks'
import type { PathResolver } from './path-resolver'

/** Size and count limits. The defaults follow the file tools' specification. */
export interface FsLimits {
  /** `read`: most bytes of text one call returns. @default 1 MiB */
  readBytes: number
  /** `write`/`edit`: largest file they write, and largest file they replace (its prior content is kept for undo). @default 1 MiB */
  writeBytes: number
  /** `grep`: larger files are skipped and counted. @default 8 MiB */
  grepFileBytes: number
  /** `grep`: a longer matching line is cut around the match, with a marker. @default 500 */
  grepLineLength: number
  /** `grep`: report progress every this many files. @default 1000 */
  grepProgressEvery: number
}

export const DEFAULT_LIMITS: FsLimits = {
  readBytes: 1 << 20,
  writeBytes: 1 << 20,
  grepFileBytes: 8 << 20,
  grepLineLength: 500,
  grepProgressEvery: 1000,
}

/** @internal What every tool of a pack shares. */
export interface FsContext {
  resolver: PathResolver
  changes: ChangeLog
  locks: FileLocks
  limits: FsLimits
  prefix: string
  /** Directory names grep and glob do not enter below their starting directory. */
  ignore: ReadonlySet<string>
  /** The target each call's permission was computed for, to hold its run to it. */
  permitted: WeakMap<object, string>
}

/** @internal The permission target (the real path) and name of a call, from its path argument. */
export function permissionFor(context: FsContext, name: 'fs.read' | 'fs.write') {
  return (args: { path?: string }, call: ToolCall) => {
    const target = context.resolver.target(args.path, call.session)
    context.permitted.set(call, target)
    return { name, target }
  }
}

/**
 * @internal The checked path must be the one the call's permission was decided for: a link
 * created or swapped between the permission check and the run (so `notsecret` now leads to
 * `secrets/`) is refused, not followed to a place no rule was asked about.
 */
export function expectPermitted(context: FsContext, call: ToolCall, path: CheckedPath): CheckedPath {
  const permitted = context.permitted.get(call)
  if (permitted !== undefined && permitted !== path.target) {
    throw new FsError('CHANGED', `${path.display} now leads to ${path.target}, not to ${permitted} as when its permission was checked (a symbolic link changed); nothing was done`)
  }
  return path
}

/** @internal How a path below a checked directory is shown, given the directory's display form. */
export function childDisplay(parent: CheckedPath, rel: string): string {
  if (parent.display === '.') return rel
  return parent.display.endsWith('/') ? parent.display + rel : `${parent.display}/${rel}`
}
