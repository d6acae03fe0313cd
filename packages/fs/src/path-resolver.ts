import { type Stats, lstatSync, realpathSync, statSync } from 'node:fs'
import { lstat, realpath, stat } from 'node:fs/promises'
import { basename, dirname, join, relative, resolve, sep } from 'node:path'
import { Minimatch } from 'minimatch'
import type { Session } from '@dogu/core'
import { type CheckStepHook, type CheckedPath, type EntryKind, type PathAccess, issueCheckedPath } from './checked-path'
import { FsError } from './errors'
import { ioError } from './fs-backend'

/** Roots and protected paths. */
export interface PathResolverOptions {
  /** The read-write root. Relative paths resolve against the process's working directory. */
  workspace: string
  /** Extra roots that may be read but never written. Roots that do not exist are ignored. */
  readOnly?: string[]
  /**
   * Globs that stay read-only, e.g. `.git`, `.env*`. A glob without `/` matches a name at
   * any depth (`.git` protects `sub/.git/config`); one with `/` is relative to the workspace
   * root. A match also covers everything below it.
   */
  protected?: string[]
  /** @internal Awaited between a path's check and its use (see `CheckStep`), for tests that race there. */
  checkStep?: CheckStepHook
}

export interface ResolveOptions {
  access: PathAccess
  /** `existing`: the target must exist. `create`: it may not exist yet (its real parent is checked). */
  intent: 'existing' | 'create'
  /** What the target must be when it exists. A trailing `/` in the input always asks for a directory. */
  expect?: 'file' | 'directory'
}

interface Roots {
  workspace: string
  readOnly: string[]
}

/**
 * The one way from a string a model wrote to a path a tool may touch. Relative input resolves
 * against the session's working directory (itself inside a root; the workspace by default),
 * `.`/`..` are folded lexically, then the existing target (or the nearest existing parent of
 * a new one) is canonicalized and must lie inside a canonical root; then read-only and
 * protected paths are checked. Percent signs, backslashes on POSIX and `~` are plain text.
 */
export class PathResolver {
  readonly workspace: string
  readonly readOnly: readonly string[]
  private protectedMatchers: Minimatch[]
  private checkStep: CheckStepHook | undefined

  constructor(options: PathResolverOptions) {
    if (!options || typeof options.workspace !== 'string' || !options.workspace || options.workspace.includes('\0')) {
      throw new FsError('INVALID_OPTIONS', 'workspace must be a non-empty path')
    }
    this.workspace = resolve(options.workspace)
    this.readOnly = (options.readOnly ?? []).map((root) => {
      if (typeof root !== 'string' || !root || root.includes('\0')) throw new FsError('INVALID_OPTIONS', `invalid read-only root ${JSON.stringify(root)}`)
      return resolve(this.workspace, root)
    })
    this.protectedMatchers = (options.protected ?? []).map((pattern) => {
      if (typeof pattern !== 'string' || !pattern) throw new FsError('INVALID_OPTIONS', `invalid protected pattern ${JSON.stringify(pattern)}`)
      // matchBase: a glob without a slash is matched against each name on the path.
      return new Minimatch(pattern.replace(/\/+$/, ''), { dot: true, matchBase: true })
    })
    this.checkStep = options.checkStep
  }

  /**
   * The permission target for an input: where the resolver would put it, judged by its real
   * path as `resolve` does (the session's real working directory, `..` folded, then every
   * symbolic link resolved; for a path that does not exist yet, its nearest existing
   * parent's), relative to the real workspace root (`.` for the root), or absolute outside
   * it. Synchronous, because permission checks are. Never throws: a path whose real place
   * cannot be told (a dangling link, a cycle, a null byte) gets its lexical target, and the
   * call fails later in `resolve`.
   */
  target(input: string | undefined, session?: Session): string {
    const text = typeof input === 'string' && input ? input : '.'
    const lexical = resolve(this.workspace, session?.cwd ?? '.', text)
    const lexicalTarget = inside(lexical, this.workspace) ? toSlash(relative(this.workspace, lexical)) || '.' : lexical
    try {
      const workspace = realpathSync.native(this.workspace)
      const cwd = session?.cwd === undefined || session.cwd === '' || session.cwd === '.' ? workspace : realpathSync.native(resolve(workspace, session.cwd))
      const real = realOrParent(resolve(cwd, text))
      if (real === undefined) return lexicalTarget
      return inside(real, workspace) ? toSlash(relative(workspace, real)) || '.' : real
    } catch {
      return lexicalTarget
    }
  }

  /** Whether a workspace-relative path (with `/`) is protected, itself or through a parent. */
  isProtected(rel: string): boolean {
    if (!this.protectedMatchers.length || rel === '.' || rel.startsWith('../')) return false
    const parts = rel.split('/')
    for (let i = 1; i <= parts.length; i++) {
      const prefix = parts.slice(0, i).join('/')
      if (this.protectedMatchers.some((matcher) => matcher.match(prefix))) return true
    }
    return false
  }

  /** Resolves and checks `input` for a tool. Throws an `FsError` written for the model. */
  async resolve(input: string, session: Session | undefined, options: ResolveOptions): Promise<CheckedPath> {
    if (typeof input !== 'string' || !input) throw new FsError('INVALID_PATH', 'the path is empty')
    if (input.includes('\0')) throw new FsError('INVALID_PATH', 'the path contains a null byte')
    const roots = await this.roots()
    const cwd = await this.sessionCwd(roots, session)
    const wantDirectory = options.expect === 'directory' || input.endsWith('/') || (sep === '\\' && input.endsWith('\\'))
    const absolute = resolve(cwd, input)
    const shown = JSON.stringify(input)
    if (!this.lexicallyAllowed(absolute, roots)) {
      throw new FsError('OUTSIDE_ROOT', `${shown} is outside the allowed roots (workspace: ${this.workspace})`)
    }

    // Canonicalize the target, or the nearest existing ancestor of a new one.
    let base = absolute
    const missing: string[] = []
    let real: string
    let entry: Stats | undefined
    for (;;) {
      entry = await lstat(base).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined
        throw ioError(error, shown)
      })
      if (entry) break
      const parent = dirname(base)
      if (parent === base) throw new FsError('NOT_FOUND', `${shown} does not exist`)
      missing.unshift(basename(base))
      base = parent
    }
    try {
      real = await realpath(base)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT') {
        throw new FsError('DANGLING_LINK', `${shown} goes through a symbolic link whose target does not exist`)
      }
      throw ioError(error, shown)
    }
    const root = rootOf(real, roots)
    if (!root) throw new FsError('OUTSIDE_ROOT', `${shown} leads outside the allowed roots through a symbolic link`)
    // A link (at the end of the path) is resolved; anything else is what lstat saw.
    const info = entry.isSymbolicLink() ? await stat(real).catch((error) => { throw ioError(error, shown) }) : entry
    let kind: EntryKind | undefined = info.isFile() ? 'file' : info.isDirectory() ? 'directory' : 'other'
    const existing = real
    if (missing.length) {
      if (kind !== 'directory') throw new FsError('NOT_A_DIRECTORY', `${shown}: ${this.describe(real, roots, cwd)} is not a directory`)
      kind = undefined
      real = join(real, ...missing)
    }

    if (options.access === 'write') {
      const lexicalRel = inside(absolute, this.workspace) ? toSlash(relative(this.workspace, absolute)) : undefined
      const realRel = toSlash(relative(roots.workspace, real))
      if (root !== roots.workspace || roots.readOnly.some((other) => inside(real, other))) {
        throw new FsError('READ_ONLY', `${shown} is in a read-only root`)
      }
      if (this.isProtected(realRel) || (lexicalRel !== undefined && this.isProtected(lexicalRel))) {
        throw new FsError('READ_ONLY', `${shown} is a protected path and cannot be written`)
      }
    }

    if (!kind) {
      if (options.intent === 'existing') throw new FsError('NOT_FOUND', `${shown} does not exist`)
      if (wantDirectory && options.expect !== 'directory') throw new FsError('INVALID_PATH', `${shown} ends with "/"; give a file path`)
    } else if (wantDirectory && kind !== 'directory') {
      throw new FsError('NOT_A_DIRECTORY', `${shown} is not a directory`)
    } else if (options.expect === 'file' && kind !== 'file') {
      throw new FsError('NOT_A_FILE', kind === 'directory' ? `${shown} is a directory, not a file` : `${shown} is not a regular file`)
    }

    const location = { root, real, base: existing, missing, access: options.access, kind, step: this.checkStep }
    return issueCheckedPath(location, this.targetOf(real, roots), this.describe(real, roots, cwd))
  }

  /** How the model sees a real path: relative to the working directory inside the workspace, absolute elsewhere. */
  private describe(real: string, roots: Roots, cwd: string): string {
    if (!inside(real, roots.workspace)) return real
    return toSlash(relative(cwd, real)) || '.'
  }

  private targetOf(real: string, roots: Roots): string {
    return inside(real, roots.workspace) ? toSlash(relative(roots.workspace, real)) || '.' : real
  }

  /** Canonical roots, read on every call so a moved or swapped root is noticed. */
  private async roots(): Promise<Roots> {
    let workspace: string
    try {
      workspace = await realpath(this.workspace)
    } catch {
      throw new FsError('NOT_FOUND', `the workspace root ${this.workspace} does not exist`)
    }
    const readOnly: string[] = []
    for (const root of this.readOnly) {
      const real = await realpath(root).catch(() => undefined)
      if (real) readOnly.push(real)
    }
    return { workspace, readOnly }
  }

  private async sessionCwd(roots: Roots, session: Session | undefined): Promise<string> {
    const cwd = session?.cwd
    if (cwd === undefined || cwd === '' || cwd === '.') return roots.workspace
    if (typeof cwd !== 'string' || cwd.includes('\0')) throw new FsError('INVALID_PATH', 'the session working directory is not a valid path')
    const absolute = resolve(roots.workspace, cwd)
    const fail = () => new FsError('OUTSIDE_ROOT', `the session working directory ${JSON.stringify(cwd)} is not a directory inside the allowed roots`)
    if (!this.lexicallyAllowed(absolute, roots) && !this.lexicallyAllowed(resolve(this.workspace, cwd), roots)) throw fail()
    const real = await realpath(absolute).catch(() => { throw fail() })
    if (!rootOf(real, roots)) throw fail()
    const info = await stat(real)
    if (!info.isDirectory()) throw fail()
    return real
  }

  private lexicallyAllowed(absolute: string, roots: Roots): boolean {
    return [this.workspace, ...this.readOnly, roots.workspace, ...roots.readOnly].some((root) => inside(absolute, root))
  }
}

/** Whether `path` is `root` or below it. Both absolute and normalized. */
export function inside(path: string, root: string): boolean {
  if (path === root) return true
  const prefix = root.endsWith(sep) ? root : root + sep
  return path.startsWith(prefix)
}

/**
 * The real path of `absolute` (normalized), or, when it does not exist, that of its nearest
 * existing parent joined with the missing names; `undefined` when a link on the way dangles
 * or loops (where it leads is not known ground).
 */
function realOrParent(absolute: string): string | undefined {
  const missing: string[] = []
  let base = absolute
  for (;;) {
    let entry: Stats | undefined
    try {
      entry = lstatSync(base)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return undefined
    }
    if (entry) break
    const parent = dirname(base)
    if (parent === base) return undefined
    missing.unshift(basename(base))
    base = parent
  }
  try {
    const real = realpathSync.native(base)
    if (missing.length && !statSync(real).isDirectory()) return undefined
    return join(real, ...missing)
  } catch {
    return undefined
  }
}

/** The most specific canonical root holding `real`, if any. */
function rootOf(real: string, roots: Roots): string | undefined {
  let best: string | undefined
  for (const root of [roots.workspace, ...roots.readOnly]) {
    if (inside(real, root) && (!best || root.length > best.length)) best = root
  }
  return best
}

/** Forward slashes, so targets and globs look the same on every platform. */
export function toSlash(path: string): string {
  return sep === '/' ? path : path.split(sep).join('/')
}
