import { lstatSync, readdirSync, realpathSync, rmSync, type Stats } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { Minimatch } from 'minimatch'
import { within } from './git-repository'

/** The fs tools' default `protected` list (packages/fs `protected`): the same default here. */
export const DEFAULT_PROTECTED: readonly string[] = Object.freeze(['.git', '.env', '.env.*'])

/** One protected entry found in the workspace: where it is, and what it is (a move keeps `dev:ino`). */
export interface ProtectedEntry {
  path: string
  /** `dev:ino`, so an entry the command only moved is not taken for a new one. */
  id: string
  /** What the sandbox mounts read-only over `path`: the entry itself, or the real target of a link. */
  mount: string
}

/** What a walk of the workspace found: the entries, and why one of them cannot be held read-only. */
export interface ProtectedScan {
  entries: ProtectedEntry[]
  /** Set when some protected path cannot be mounted read-only (a dangling link, a folder it cannot read). */
  problem?: string
}

/**
 * The protected globs of the fs tools, matched as they match them (packages/fs
 * path-resolver.ts): a glob without `/` matches a name at any depth, one with `/` is
 * relative to the workspace, and a match covers everything below it.
 */
export class ProtectedPaths {
  private readonly matchers: Minimatch[]

  constructor(readonly patterns: readonly string[] = DEFAULT_PROTECTED) {
    this.matchers = patterns.map((pattern) => {
      if (typeof pattern !== 'string' || !pattern) throw new Error(`invalid protected pattern ${JSON.stringify(pattern)}`)
      return new Minimatch(pattern.replace(/\/+$/, ''), { dot: true, matchBase: true })
    })
  }

  get empty(): boolean {
    return this.matchers.length === 0
  }

  /** Whether `rel` (workspace-relative, with `/`) is itself matched; its parents are not looked at. */
  matches(rel: string): boolean {
    return this.matchers.some((matcher) => matcher.match(rel))
  }

  /** Whether the workspace's own `.git` is protected: the premise of `trustWorkspaceGit`. */
  coversRootGit(): boolean {
    return this.matches('.git')
  }

  /**
   * Walks the real workspace `root` (never through a link) for the protected entries in it,
   * stopping at each match: everything below is covered by its mount. A link that is
   * protected is held by its real target when that lies inside one of `writable` (the
   * workspace and the writable paths); elsewhere it is read-only already.
   */
  scan(root: string, writable: readonly string[]): ProtectedScan {
    const entries: ProtectedEntry[] = []
    let problem: string | undefined
    if (this.empty) return { entries }
    const walk = (dir: string) => {
      let names: import('node:fs').Dirent[]
      try {
        names = readdirSync(dir, { withFileTypes: true })
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code
        // Gone since its parent was read: nothing of it to hold.
        if (code === 'ENOENT' || code === 'ENOTDIR') return
        problem ??= `\`${relative(root, dir) || '.'}\` cannot be read (${code}), so a protected path in it cannot be held read-only`
        return
      }
      for (const dirent of names) {
        const path = join(dir, dirent.name)
        const rel = relative(root, path)
        if (this.matches(rel)) {
          const entry = this.entry(path, writable)
          if (typeof entry === 'string') problem ??= `\`${rel}\` ${entry}`
          else if (entry) entries.push(entry)
        } else if (dirent.isDirectory()) walk(path)
      }
    }
    walk(root)
    return { entries, problem }
  }

  private entry(path: string, writable: readonly string[]): ProtectedEntry | string | undefined {
    let stats: Stats
    try {
      stats = lstatSync(path)
    } catch {
      return undefined
    }
    const id = `${stats.dev}:${stats.ino}`
    if (!stats.isSymbolicLink()) return { path, id, mount: path }
    let real: string
    try {
      real = realpathSync.native(path)
    } catch {
      return 'is a link that leads nowhere: what it would name could be created inside, so it cannot be held read-only'
    }
    return writable.some((root) => within(real, root)) ? { path, id, mount: real } : { path, id, mount: '' }
  }
}

/**
 * Removes `created` (protected entries a command made): the sandbox cannot refuse to create
 * a name, so it undoes it. Only called when no other sandboxed command can write the
 * workspace, so nothing swaps a folder meanwhile; a path whose real parent is not its
 * parent (a link on the way) is left and reported.
 */
export function removeCreated(root: string, created: readonly ProtectedEntry[]): { removed: ProtectedEntry[]; left: ProtectedEntry[] } {
  const removed: ProtectedEntry[] = []
  const left: ProtectedEntry[] = []
  for (const entry of created) {
    try {
      if (realpathSync.native(dirname(entry.path)) !== dirname(entry.path)) throw new Error('a link on the way')
      rmSync(entry.path, { recursive: true, force: true })
      removed.push(entry)
    } catch {
      left.push(entry)
    }
  }
  return { removed, left }
}
