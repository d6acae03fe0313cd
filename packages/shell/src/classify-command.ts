import { detectWrites } from './detect-writes'
import { lexicalPathOperands, workspacePathOperands, type PathOperands } from './path-operands'
import { READ_COMMANDS } from './read-commands'
import { splitCommandLine } from './split-command-line'

export interface CommandClassification {
  /** `read` only when every program and argument is on the read-only list. */
  effect: 'read' | 'exec'
  /** Why it is `exec`: the first thing the read-only check could not vouch for. */
  reason?: string
  /** What the command line appears to write, for the approval prompt (best effort). */
  writes: string[]
}

/** Where the command runs, so path operands are judged on disk and not by their text alone. */
export interface ClassifyOptions {
  /** The workspace root: the real path of every path operand must lie inside it. */
  workspace: string
  /** The working directory, relative to the workspace. @default the workspace root */
  cwd?: string
  /**
   * Whether the workspace's own `.git` (at its root) is out of the model's reach, as the fs
   * tools' default `protected` list makes it. When `false`, git commands in it are `exec`.
   * @default true
   */
  trustWorkspaceGit?: boolean
}

// A bare program name; `./x`, `/bin/ls` and `FOO=1 ls` are not vouched for.
const PROGRAM = /^[A-Za-z0-9][A-Za-z0-9._+-]*$/

/**
 * Classifies a command line for the permission check: `read` when it is one or more
 * simple commands joined by `|`, `&&`, `||`, `;` or newlines, each a program on the
 * closed read-only list with only the arguments its rule allows; `exec` otherwise.
 * Without `options`, path operands are judged by their text alone, which cannot see a
 * symbolic link leading out of the workspace nor the repository git would use; the `bash`
 * tool always passes them.
 *
 * @example
 * classifyCommand('git status')            // { effect: 'read', writes: [] }
 * classifyCommand('cat a > b').writes      // ['writes "b" (redirection >)']
 * classifyCommand('git -c core.pager=x log').effect  // 'exec'
 */
export function classifyCommand(command: string, options?: ClassifyOptions): CommandClassification {
  const paths = options ? workspacePathOperands(options.workspace, options.cwd, options.trustWorkspaceGit ?? true) : lexicalPathOperands
  const reason = readOnlyViolation(command, paths)
  return reason === undefined ? { effect: 'read', writes: [] } : { effect: 'exec', reason, writes: detectWrites(command) }
}

function readOnlyViolation(command: string, paths: PathOperands): string | undefined {
  const split = splitCommandLine(command)
  if (!split.ok) return `it uses ${split.reason}`
  for (const [program, ...args] of split.commands) {
    if (!PROGRAM.test(program)) return `\`${program}\` is not a plain program name`
    const rule = READ_COMMANDS.get(program)
    if (!rule) return `\`${program}\` is not on the read-only list`
    const violation = rule(args, paths)
    if (violation !== undefined) return violation
  }
  return undefined
}
