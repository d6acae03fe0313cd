// Runs a command as `nobody` with this repository as its working directory, from wherever the
// repository is. A clone under a folder nobody cannot pass through (root's 0700 home, a
// `mktemp -d` folder) is bound, in a mount namespace of the child's own, onto an empty folder
// nobody can reach: the child sees the same files under another path, and the host's mounts
// are left as they were. Where no mount namespace can be made (a container without
// CAP_SYS_ADMIN), the child runs in the repository itself if nobody can reach it there.
// Where neither works, `prepareUnprivileged` says why in one sentence, for the tier's
// "unprivileged pass did not run: <why>" line.
import { type ChildProcess, spawn, type SpawnOptions, spawnSync } from 'node:child_process'
import { accessSync, chmodSync, chownSync, constants, mkdirSync, mkdtempSync, readdirSync, rmdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'

/** uid and gid of `nobody` on Debian (`nobody`/`nogroup`). */
export const NOBODY = 65534

/** Set to `1` (CI) to make an unprivileged pass that cannot run a failure. */
export const REQUIRE_UNPRIVILEGED = 'DOGU_REQUIRE_UNPRIVILEGED'

/** The start of the tier's line when it did not run; `scripts/test.sh` looks for it. */
export const NOT_RUN = 'unprivileged pass did not run'

/** What the child needs to read in the repository, relative to it. */
const NEEDED = 'node_modules/vitest/vitest.mjs'

const SETPRIV_ARGS = [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--']
// Run by root in the new mount namespace: bind the repository, enter it, become the command.
const BIND_SCRIPT = 'mount --bind "$1" "$2" && cd "$2" && shift 2 && exec "$@"'
// Run as nobody where the child will run: can it read what it needs, and write its home?
// By absolute path, as node resolves modules (a relative one would pass from the working
// directory alone); named as the repository's real path (argv[1]), whichever path the child
// sees it under.
const PROBE_SCRIPT = `
const { accessSync, constants } = require('node:fs')
const { join, resolve } = require('node:path')
for (const [path, shown, mode, verb] of [[resolve(${JSON.stringify(NEEDED)}), join(process.argv[1], ${JSON.stringify(NEEDED)}), constants.R_OK, 'read'], [process.env.HOME, process.env.HOME, constants.W_OK, 'write']]) {
  try { accessSync(path, mode) } catch (error) { console.error('cannot ' + verb + ' ' + shown + ' (' + error.code + ')'); process.exit(1) }
}`

/** A run as nobody: its folder, its home, and the repository as it sees it. */
export interface UnprivilegedRun {
  /** `bind`: the repository bound in a mount namespace of the child's own; `direct`: the repository where it is. */
  how: 'bind' | 'direct'
  /** The repository as the child sees it (its working directory). */
  repo: string
  /** nobody's own folder for the run, for `HOME` and `TMPDIR`; the same path inside and out. */
  home: string
  /** Starts `argv` as nobody (uid and gid 65534, no groups) in `repo`. `env.HOME` should be `home`. */
  spawn(argv: string[], options: Omit<SpawnOptions, 'cwd'> & { env: NodeJS.ProcessEnv }): ChildProcess
  /** Removes the run's folder (never through the bind: its mount point must be empty here). */
  close(): void
}

/**
 * Makes a run as nobody for the repository at `repo`, or says why there cannot be one.
 * `env` supplies the `PATH` that `setpriv`, `unshare` and `mount` are found on.
 */
export function prepareUnprivileged(repo: string, env: NodeJS.ProcessEnv = process.env): UnprivilegedRun | { reason: string } {
  const setpriv = onPath('setpriv', env.PATH)
  if (!setpriv) return { reason: `no setpriv on PATH (${env.PATH ?? 'unset'}); it comes with util-linux (apt-get install -y util-linux)` }
  const uid = process.getuid?.()
  if (uid !== 0) return { reason: `this process runs as uid ${uid ?? 'unknown'}, not root, so it cannot switch to nobody` }

  const dir = mkdtempSync(join(tmpdir(), 'dogu-escape-nobody-'))
  chmodSync(dir, 0o755)
  const home = join(dir, 'home')
  const mountPoint = join(dir, 'repo')
  mkdirSync(home, { mode: 0o700 })
  chownSync(home, NOBODY, NOBODY)
  mkdirSync(mountPoint)
  const close = () => {
    // An empty mount point proves the bind stayed in the child's namespace; otherwise
    // removing it recursively would delete the repository.
    if (readdirSync(mountPoint).length) throw new Error(`${mountPoint} is not empty: the repository's bind reached this mount namespace; not removing it`)
    rmdirSync(mountPoint)
    rmSync(home, { recursive: true, force: true })
    rmdirSync(dir)
  }

  const unshare = onPath('unshare', env.PATH)
  const mount = onPath('mount', env.PATH)
  const bound = (argv: string[]) => ({
    file: unshare!,
    args: ['--mount', '--propagation', 'slave', '--', '/bin/sh', '-c', BIND_SCRIPT, 'sh', repo, mountPoint, setpriv, ...SETPRIV_ARGS, ...argv],
    cwd: dir,
  })
  const direct = (argv: string[]) => ({ file: setpriv, args: [...SETPRIV_ARGS, ...argv], cwd: repo })
  const probe = (launch: (argv: string[]) => { file: string; args: string[]; cwd: string }) => {
    const { file, args, cwd } = launch([process.execPath, '-e', PROBE_SCRIPT, repo])
    const result = spawnSync(file, args, { cwd, env: { PATH: env.PATH, HOME: home }, encoding: 'utf8', timeout: 30_000 })
    if (result.status === 0) return undefined
    // One line, for the tier's one line.
    return result.error?.message ?? (result.stderr.trim().replace(/\s*\n\s*/g, '; ') || `exit code ${result.status}`)
  }
  const made = (how: UnprivilegedRun['how'], launch: typeof direct): UnprivilegedRun => ({
    how,
    repo: how === 'bind' ? mountPoint : repo,
    home,
    spawn: (argv, options) => {
      const { file, args, cwd } = launch(argv)
      return spawn(file, args, { ...options, cwd })
    },
    close,
  })

  const bindError = !unshare ? 'no unshare on PATH' : !mount ? 'no mount on PATH' : probe(bound)
  if (bindError === undefined) return made('bind', bound)
  // Failed as nobody (setpriv, node, a file): the repository where it is would fail the same.
  if (unshare && mount && !/(^|; )(unshare|mount|sh):/.test(bindError)) {
    close()
    return { reason: `as nobody (uid ${NOBODY}): ${bindError}` }
  }
  // Failed before setpriv ran (no namespace, no bind): the repository where it is may do.
  const directError = probe(direct)
  if (directError === undefined) return made('direct', direct)
  close()
  const blocking = closedFolder(repo)
  return {
    reason: `nobody (uid ${NOBODY}) cannot reach the repository at ${repo} (${directError}${blocking ? `; ${blocking}` : ''}), and no mount namespace could bind it where nobody can (${bindError})`,
  }
}

/**
 * The one test of a tier that cannot run: prints its line and passes, or fails where
 * `DOGU_REQUIRE_UNPRIVILEGED=1` (CI) requires the pass.
 */
export function reportNotRun(line: string, env: NodeJS.ProcessEnv = process.env): void {
  if (env[REQUIRE_UNPRIVILEGED] === '1') throw new Error(`${line}; ${REQUIRE_UNPRIVILEGED}=1 requires it`)
  console.log(line)
}

/** The executable `name` on `path`, or undefined. */
function onPath(name: string, path: string | undefined): string | undefined {
  for (const folder of (path ?? '').split(delimiter)) {
    if (!folder) continue
    const file = join(folder, name)
    try {
      accessSync(file, constants.X_OK)
      if (statSync(file).isFile()) return file
    } catch {}
  }
  return undefined
}

/** The nearest folder above `path` that others cannot pass through, as "<folder> is 0700". */
function closedFolder(path: string): string | undefined {
  for (let folder = dirname(path); ; folder = dirname(folder)) {
    const { mode } = statSync(folder)
    if (!(mode & 0o001)) return `${folder} is ${(mode & 0o7777).toString(8).padStart(4, '0')}`
    if (folder === dirname(folder)) return undefined
  }
}
