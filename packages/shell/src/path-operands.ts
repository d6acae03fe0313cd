import { lstatSync, realpathSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { repositoryViolation, within as inside } from './git-repository'

/** How the read-only check judges the path operands of a command. */
export interface PathOperands {
  /** Why `path` is not vouched for as a read inside the workspace, or `undefined`. */
  check(path: string): string | undefined
  /** Whether `path` is a directory; `false` when it cannot be told. */
  isDirectory(path: string): boolean
  /**
   * Why git may not run here as a read: the repository it would use is one the model could
   * have written, or reaches beyond the workspace. `undefined` when it is fine, and always
   * for the text-only judge, which cannot see the disk.
   */
  repository(): string | undefined
}

/** An absolute path or one that climbs with `..`: not vouched for as a workspace read. */
export function leavesDirectory(path: string): boolean {
  return path.startsWith('/') || path.split('/').includes('..')
}

const outside = (path: string) => `\`${path}\` is outside the working directory`

/** Judges the text alone; it cannot see symbolic links. */
export const lexicalPathOperands: PathOperands = {
  check: (path) => leavesDirectory(path) ? outside(path) : undefined,
  isDirectory: () => false,
  repository: () => undefined,
}

/**
 * Judges the text, then the disk, as the fs tools do: the real path (through every
 * symbolic link; for a path that does not exist yet, that of its nearest existing parent)
 * must lie inside the real workspace. A dangling link is refused: where it points is not
 * known ground. Synchronous because the permission check is; a few `realpath` calls.
 */
export function workspacePathOperands(workspace: string, cwd = '.', trustWorkspaceGit = true): PathOperands {
  let base: { root: string; cwd: string } | null | undefined
  const where = () => base === undefined ? (base = realBase(workspace, cwd)) : base
  return {
    check(path) {
      if (leavesDirectory(path)) return outside(path)
      const found = where()
      if (!found) return 'the working directory is not a directory inside the workspace'
      if (!realInside(resolve(found.cwd, path), found.root)) return `\`${path}\` leads outside the workspace through a symbolic link`
      return undefined
    },
    isDirectory(path) {
      const found = where()
      try {
        return !!found && statSync(resolve(found.cwd, path)).isDirectory()
      } catch {
        return false
      }
    },
    repository() {
      const found = where()
      if (!found) return 'the working directory is not a directory inside the workspace'
      return repositoryViolation({ root: found.root, cwd: found.cwd, trustWorkspaceGit })
    },
  }
}

function realBase(workspace: string, cwd: string) {
  try {
    const root = realpathSync.native(workspace)
    const real = realpathSync.native(resolve(root, cwd))
    return inside(real, root) && statSync(real).isDirectory() ? { root, cwd: real } : null
  } catch {
    return null
  }
}

function realInside(absolute: string, root: string): boolean {
  let path = absolute
  for (;;) {
    try {
      return inside(realpathSync.native(path), root)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return false
    }
    // Missing, or reached through a dangling link: a link here is the dangling one.
    try {
      if (lstatSync(path).isSymbolicLink()) return false
    } catch {}
    const parent = dirname(path)
    if (parent === path) return false
    path = parent
  }
}
