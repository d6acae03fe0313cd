import { detectWrites } from './detect-writes'
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

// A bare program name; `./x`, `/bin/ls` and `FOO=1 ls` are not vouched for.
const PROGRAM = /^[A-Za-z0-9][A-Za-z0-9._+-]*$/

/**
 * Classifies a command line for the permission check: `read` when it is one or more
 * simple commands joined by `|`, `&&`, `||`, `;` or newlines, each a program on the
 * closed read-only list with only the arguments its rule allows; `exec` otherwise.
 *
 * @example
 * classifyCommand('git status')            // { effect: 'read', writes: [] }
 * classifyCommand('cat a > b').writes      // ['writes "b" (redirection >)']
 * classifyCommand('git -c core.pager=x log').effect  // 'exec'
 */
export function classifyCommand(command: string): CommandClassification {
  const reason = readOnlyViolation(command)
  return reason === undefined ? { effect: 'read', writes: [] } : { effect: 'exec', reason, writes: detectWrites(command) }
}

function readOnlyViolation(command: string): string | undefined {
  const split = splitCommandLine(command)
  if (!split.ok) return `it uses ${split.reason}`
  for (const [program, ...args] of split.commands) {
    if (!PROGRAM.test(program)) return `\`${program}\` is not a plain program name`
    const rule = READ_COMMANDS.get(program)
    if (!rule) return `\`${program}\` is not on the read-only list`
    const violation = rule(args)
    if (violation !== undefined) return violation
  }
  return undefined
}
