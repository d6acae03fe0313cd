import { lstatSync, readFileSync, realpathSync, statSync, type Stats } from 'node:fs'
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { parseGitConfig } from './git-config-file'
import { gitlinkPaths } from './git-index'

export interface RepositoryWhere {
  /** The real path of the workspace root. */
  root: string
  /** The real path of the working directory, inside `root`. */
  cwd: string
  /** Whether the workspace's own `.git` (at its root) is out of the model's reach. */
  trustWorkspaceGit: boolean
}

// Keys of a trusted repository's config that make a read-only git command run a program
// the environment cannot switch off (see read-environment.ts for those it does), or read
// config the check has not seen.
const PROGRAM_KEYS: [RegExp, string][] = [
  [/^include\./, 'includes another config file'],
  [/^includeif\./, 'includes another config file'],
  [/^diff\.external$/, 'names an external diff program'],
  [/^diff\..+\.(textconv|command)$/, 'names a diff driver program'],
  [/^filter\..+\.(clean|smudge|process)$/, 'names a filter program'],
  [/^extensions\.partialclone$/, 'makes reads fetch missing objects, which runs a transport'],
  [/^remote\..+\.promisor$/, 'makes reads fetch missing objects, which runs a transport'],
  [/^gpg\.(.+\.)?program$/, 'names a signature program'],
]

const MAX_DEPTH = 4
const MAX_CONFIG = 1 << 20
const MAX_INDEX = 256 << 20

/**
 * Why a git command in `cwd` may not run as a read, or `undefined` when the repository git
 * would use cannot have been written by the model: none at all, or the workspace's own
 * `.git` when it is protected (`trustWorkspaceGit`), with a config that names no program
 * and submodules whose git directories are inside it too.
 *
 * Mirrors git's discovery from `cwd` upwards: any `.git`, or any directory shaped like a
 * bare repository (`HEAD`, `objects`, `refs`), inside the workspace other than the root's
 * own `.git` is something the model could have written. A repository above the workspace
 * would show files outside it. Reads run with `GIT_CEILING_DIRECTORIES` set to the
 * workspace's parent and `safe.bareRepository=explicit` as a second line.
 */
export function repositoryViolation(where: RepositoryWhere): string | undefined {
  const { root, cwd } = where
  const shown = (path: string) => relative(root, path) || '.'
  for (let dir = cwd; ; dir = dirname(dir)) {
    const insideWorkspace = within(dir, root)
    if (bareShaped(dir)) {
      return insideWorkspace
        ? `\`${shown(dir)}\` is shaped like a bare git repository, which the model could have written (its config can run programs)`
        : beyond(dir)
    }
    const dotGit = entry(join(dir, '.git'))
    if (dotGit) {
      if (!insideWorkspace) return beyond(dir)
      if (!where.trustWorkspaceGit) return 'the workspace\'s own `.git` is not protected from the model (`trustWorkspaceGit` is off), and its config can run programs'
      const trusted = new Trusted(root)
      if (dir === root) return trusted.repository()
      // A checked-out submodule (or a worktree) names a git directory inside the
      // workspace's own; anything else here is the model's.
      if (dotGit.isFile() && entry(join(root, '.git'))) {
        const nested = trusted.nested(join(dir, '.git'), dir)
        if (nested !== null) return nested
      }
      return `\`${shown(join(dir, '.git'))}\` is a git repository inside the workspace, which the model could have written (its config can run programs)`
    }
    if (dirname(dir) === dir) return undefined
  }
}

const beyond = (dir: string) => `git would use the repository at \`${dir}\`, which reaches beyond the workspace`

/** Checks of the workspace's own repository: every file git reads lies out of the model's reach. */
class Trusted {
  private dotGit: string

  constructor(private root: string) {
    this.dotGit = join(root, '.git')
  }

  repository(): string | undefined {
    const gitDir = this.gitDir()
    if (typeof gitDir !== 'object') return gitDir
    return this.gitDirectory(gitDir.path, this.root, 0)
  }

  /**
   * The repository of a gitfile below the root (`sub/.git`): `undefined` when it names a
   * directory inside the workspace's own git directory (`.git/modules/sub`) and both
   * check out; otherwise a reason, or `null` when it is simply not one of those.
   */
  nested(gitFile: string, workTree: string): string | undefined | null {
    const own = this.gitDir()
    if (typeof own === 'string') return own
    const target = this.gitFile(gitFile)
    if (!target || !within(target, own.path)) return null
    return this.gitDirectory(own.path, this.root, 0) ?? this.gitDirectory(target, real(workTree) ?? workTree, 1)
  }

  private gitDir(): { path: string } | string {
    const stats = entry(this.dotGit)
    let gitDir: string | undefined
    if (stats?.isDirectory()) gitDir = this.dotGit
    else if (stats?.isSymbolicLink()) gitDir = real(this.dotGit)
    else if (stats?.isFile()) gitDir = this.gitFile(this.dotGit)
    if (!gitDir) return '`.git` is neither a directory nor a readable gitfile'
    return this.writable(gitDir, '`.git`') ?? { path: gitDir }
  }

  /** The model can write anywhere in the workspace but in its own `.git`. */
  private writable(path: string, what: string): string | undefined {
    return within(path, this.root) && !within(path, this.dotGit) ? `${what} leads to \`${relative(this.root, path)}\`, which the model could have written` : undefined
  }

  private gitFile(path: string): string | undefined {
    const text = readSmall(path, 4096)
    const match = text && /^gitdir: (.+?)[\r\n]*$/.exec(text)
    return match ? real(resolve(dirname(path), match[1])) : undefined
  }

  private gitDirectory(gitDir: string, workTree: string, depth: number): string | undefined {
    if (depth > MAX_DEPTH) return 'submodules are nested too deeply to check'
    const name = relative(this.root, workTree) || '.'
    let common = gitDir
    const commonFile = join(gitDir, 'commondir')
    if (entry(commonFile)) {
      const text = readSmall(commonFile, 4096)
      const found = text && real(resolve(gitDir, text.trim()))
      if (!found) return `the git directory of \`${name}\` names a common directory that cannot be read`
      const violation = this.writable(found, `the git directory of \`${name}\``)
      if (violation) return violation
      common = found
    }
    let hashSize = 20
    for (const file of [join(common, 'config'), join(gitDir, 'config.worktree')]) {
      if (!entry(file)) continue
      const path = real(file)
      if (!path) return `\`${file}\` cannot be read`
      const violation = this.writable(path, `the git config of \`${name}\``)
      if (violation) return violation
      const text = readSmall(path, MAX_CONFIG)
      const entries = text === undefined ? undefined : parseGitConfig(text)
      if (!entries) return `the git config of \`${name}\` cannot be read completely`
      for (const { key, value } of entries) {
        const lower = key.toLowerCase()
        const program = PROGRAM_KEYS.find(([pattern]) => pattern.test(lower))
        if (program) return `the git config of \`${name}\` sets \`${key}\`, which ${program[1]}`
        if (lower === 'core.worktree' && (value === null || real(resolve(gitDir, value)) !== workTree)) {
          return `the git config of \`${name}\` sets \`core.worktree\` to another directory`
        }
        if (lower === 'extensions.objectformat' && value?.toLowerCase() === 'sha256') hashSize = 32
      }
    }
    const indexFile = join(gitDir, 'index')
    if (!entry(indexFile)) return undefined
    const index = real(indexFile)
    if (!index) return `the git index of \`${name}\` cannot be read`
    const violation = this.writable(index, `the git index of \`${name}\``)
    if (violation) return violation
    const links = submodules(index, hashSize)
    if (!links) return `the git index of \`${name}\` cannot be read (a split index?)`
    for (const link of links) {
      if (isAbsolute(link) || link.split('/').some((part) => part === '..' || part === '.git')) return `the git index of \`${name}\` has an odd submodule path`
      const subTree = join(workTree, link)
      const dotGit = join(subTree, '.git')
      const stats = entry(dotGit)
      // Not checked out: git does not look inside.
      if (!stats) continue
      const subGitDir = stats.isFile() ? this.gitFile(dotGit) : real(dotGit)
      const subReal = real(subTree)
      if (!subGitDir || !subReal) return `the submodule \`${relative(this.root, subTree)}\` has a \`.git\` that cannot be read`
      const writable = this.writable(subGitDir, `the submodule \`${relative(this.root, subTree)}\``)
      if (writable) return `${writable} (git status runs git inside it)`
      const nested = this.gitDirectory(subGitDir, subReal, depth + 1)
      if (nested) return nested
    }
    return undefined
  }
}

// Parsed indexes by path, while the file is unchanged: a large index is read once.
const indexCache = new Map<string, { key: string; links: string[] | undefined }>()

function submodules(path: string, hashSize: number): string[] | undefined {
  let stats: Stats
  try {
    stats = statSync(path)
  } catch {
    return undefined
  }
  if (stats.size > MAX_INDEX) return undefined
  const key = `${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}:${hashSize}`
  const cached = indexCache.get(path)
  if (cached?.key === key) return cached.links
  let links: string[] | undefined
  try {
    links = gitlinkPaths(readFileSync(path), hashSize)
  } catch {
    links = undefined
  }
  if (indexCache.size >= 16) indexCache.delete(indexCache.keys().next().value!)
  indexCache.set(path, { key, links })
  return links
}

function bareShaped(dir: string): boolean {
  return !!entry(join(dir, 'HEAD')) && !!entry(join(dir, 'objects')) && !!entry(join(dir, 'refs'))
}

function entry(path: string): Stats | undefined {
  try {
    return lstatSync(path)
  } catch {
    return undefined
  }
}

function real(path: string): string | undefined {
  try {
    return realpathSync.native(path)
  } catch {
    return undefined
  }
}

function readSmall(path: string, limit: number): string | undefined {
  try {
    if (statSync(path).size > limit) return undefined
    return readFileSync(path, 'utf8')
  } catch {
    return undefined
  }
}

export function within(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep)
}
