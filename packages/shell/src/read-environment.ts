import { realpathSync } from 'node:fs'
import { delimiter, dirname, isAbsolute, resolve } from 'node:path'
import { within } from './git-repository'

/**
 * Config git reads last (command-line scope, which also reaches the git processes it
 * starts in submodules): the programs a repository's config could name for a read-only
 * command, switched off. The repository's own config is checked before a command is
 * classed `read` (git-repository.ts); this is the second line, for a config that appears
 * between the check and the run, and for the keys a model-written config would use.
 */
export const READ_GIT_CONFIG: readonly (readonly [string, string])[] = [
  // A bare-repository-shaped directory is not used unless named with --git-dir.
  ['safe.bareRepository', 'explicit'],
  ['core.fsmonitor', 'false'],
  ['core.hooksPath', '/dev/null'],
  ['core.pager', 'cat'],
  // Fetching missing objects of a partial clone runs a transport (`remote.*.uploadpack`
  // runs locally for a path URL): no protocol is allowed. `GIT_NO_LAZY_FETCH` (git ≥ 2.45)
  // says the same.
  ['protocol.allow', 'never'],
  ...['file', 'git', 'ssh', 'http', 'https', 'ftp', 'ftps', 'ext'].map((name) => [`protocol.${name}.allow`, 'never'] as const),
]

// Variables that make a program load code or config from a file, or change how listed
// programs parse their arguments (POSIXLY_CORRECT stops option parsing at the first
// operand, so `grep x a -e /etc/passwd` would open `-e` and `/etc/passwd`).
const REMOVED = [
  'BASH_ENV', 'ENV', 'RIPGREP_CONFIG_PATH', 'GREP_OPTIONS', 'POSIXLY_CORRECT', '_POSIX2_VERSION',
  'LD_PRELOAD', 'LD_AUDIT', 'GCONV_PATH',
]

// Lists of directories searched for programs or libraries: an entry inside the workspace,
// or a relative or empty one (the working directory), would find a file the model wrote.
const SEARCH_PATHS = ['PATH', 'LD_LIBRARY_PATH']

/**
 * The environment for a command line classed `read`: `env` without what could make a
 * listed program run or read something the model wrote.
 *
 * - every `GIT_*` variable is dropped (`GIT_DIR`, `GIT_CONFIG_*`, `GIT_EXTERNAL_DIFF`, …),
 *   then git gets no system or global config, no optional locks (no index write, no
 *   `post-index-change` hook), `cat` as pager, `GIT_CEILING_DIRECTORIES` at the
 *   workspace's parent (no repository above the workspace) and `READ_GIT_CONFIG`;
 * - `BASH_ENV`/`ENV` (a startup file for `bash -c`), `RIPGREP_CONFIG_PATH` (its file can
 *   hold `--pre=program`), exported shell functions (`BASH_FUNC_*`, which would replace
 *   `ls` or `git`), `LD_PRELOAD`, `LD_AUDIT`, `GCONV_PATH`, `POSIXLY_CORRECT` are dropped;
 * - `PATH` and `LD_LIBRARY_PATH` keep only absolute entries outside the workspace.
 */
export function readEnvironment(env: NodeJS.ProcessEnv, workspace: string): NodeJS.ProcessEnv {
  const root = realOrSelf(resolve(workspace))
  const out: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || name.startsWith('GIT_') || name.startsWith('BASH_FUNC_') || REMOVED.includes(name)) continue
    out[name] = value
  }
  for (const name of SEARCH_PATHS) {
    const value = out[name]
    if (value === undefined) continue
    const kept = value.split(delimiter).filter((entry) => isAbsolute(entry) && !within(resolve(entry), root) && !within(realOrSelf(entry), root))
    // An empty PATH is one empty entry, the working directory, and bash's built-in
    // default ends with `.`: give it the system's directories instead.
    if (kept.length) out[name] = kept.join(delimiter)
    else if (name === 'PATH') out[name] = '/usr/bin:/bin'
    else delete out[name]
  }
  Object.assign(out, {
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_TERMINAL_PROMPT: '0',
    GIT_NO_LAZY_FETCH: '1',
    GIT_CONFIG_COUNT: String(READ_GIT_CONFIG.length),
  })
  if (dirname(root) !== root) out.GIT_CEILING_DIRECTORIES = dirname(root)
  READ_GIT_CONFIG.forEach(([key, value], i) => {
    out[`GIT_CONFIG_KEY_${i}`] = key
    out[`GIT_CONFIG_VALUE_${i}`] = value
  })
  return out
}

function realOrSelf(path: string): string {
  try {
    return realpathSync.native(path)
  } catch {
    return path
  }
}
