import { spawnSync } from 'node:child_process'
import { join } from 'node:path'

const SCRIPT = join(import.meta.dirname, 'bash-glob.sh')

/**
 * The paths GNU bash expands `pattern` to in `cwd` (globstar, extglob, nullglob; dotglob
 * when `dot`; C locale), sorted, each directory marked with a trailing "/" as the glob tool
 * marks it. `braces` runs the pattern through brace expansion first (an eval: our own
 * patterns only).
 */
export function bashGlob(cwd: string, pattern: string, options: { dot?: boolean, braces?: boolean } = {}): string[] {
  const child = spawnSync('bash', ['--norc', '--noprofile', SCRIPT], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, LC_ALL: 'C', PATTERN: pattern, DOT: options.dot ? '1' : '0', BRACES: options.braces ? '1' : '0' },
  })
  if (child.error) throw new Error(`the glob oracle could not start bash: ${child.error.message}`)
  if (child.status !== 0) throw new Error(`bash failed on ${JSON.stringify(pattern)} (status ${child.status}): ${child.stderr.trim()}`)
  return [...new Set(child.stdout.split('\0').filter(Boolean))].sort()
}
