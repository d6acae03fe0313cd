import { defineTool, type PermissionSpec, type Tool, type ToolCall } from '@dogu/core'
import Schema from 'schemastery'
import { classifyCommand, type ClassifyOptions } from './classify-command'
import { realpathSync } from 'node:fs'
import { realpath } from 'node:fs/promises'
import { formatOutcome } from './format-outcome'
import { ProcessTable } from './process-table'
import { ProgressStream } from './progress-stream'
import { readEnvironment } from './read-environment'
import { resolveWorkingDirectory } from './resolve-working-directory'
import type { SandboxOptions } from './sandbox-config'
import { ShellSandbox } from './sandbox-plan'
import { DEFAULT_PROTECTED, ProtectedPaths } from './sandbox-protected'
import { scrubEnvironment } from './scrub-environment'
import { ShellError } from './shell-error'

export interface ShellToolOptions {
  /** The workspace root: commands run in the session's `cwd` inside it, or in the root. */
  workspace: string
  /** @default 'bash' */
  name?: string
  /** The shell, run as `shell -c command`. @default 'bash' */
  shell?: string
  /** Variables commands get on top of the (scrubbed, by default) environment: the only way a token reaches them. */
  env?: Record<string, string>
  /** Default per-call timeout in milliseconds. @default 120_000 */
  timeout?: number
  /** Largest timeout a call may ask for. @default 600_000 */
  maxTimeout?: number
  /** Bytes kept from the start of stdout and of stderr. @default 16384 */
  headBytes?: number
  /** Bytes kept from the end of stdout and of stderr. @default 16384 */
  tailBytes?: number
  /** Milliseconds between SIGTERM and SIGKILL. @default 2000 */
  killGrace?: number
  /** Owns the running commands; dispose it to terminate them. @default a table of its own */
  processes?: ProcessTable
  /**
   * The fs tools' `protected` globs (give both packs the same list): read-only inside the
   * sandbox, and removed after a command that created one. A glob without `/` matches a
   * name at any depth; one with `/` is relative to the workspace.
   * @default ['.git', '.env', '.env.*']
   */
  protected?: string[]
  /**
   * Whether the workspace's own `.git` is out of the model's reach. Set `false` when the
   * model can write it: git commands then ask.
   * @default whether `protected` covers `.git`
   */
  trustWorkspaceGit?: boolean
  /**
   * The OS sandbox (bubblewrap on Linux): detected once, when the tool is created. Every
   * field has a default (`mode: 'auto'`, `network: 'none'`, `env: 'scrub'`); see
   * docs/shell-tool.md.
   */
  sandbox?: SandboxOptions
}

/** What the permission check receives for a `bash` call. */
export interface ShellPermission extends PermissionSpec {
  name: 'shell'
  /** The command line, trimmed: rules match it as `shell:git status`. */
  target: string
  /** `write` when the sandbox confines a command to the workspace (no network); `exec` otherwise. */
  effect: 'read' | 'write' | 'exec'
  /** For the approval prompt: why it is not read-only and what it appears to write. */
  reason?: string
  /** Whether the command will run in the OS sandbox; rules match it as `sandboxed: true`. */
  sandboxed: boolean
}

/**
 * The permission a command line needs; exported so hosts can preview a decision. Give
 * `where` (as the tool does) to judge path operands on disk, through symbolic links.
 */
export function shellPermission(command: string, where?: ClassifyOptions): ShellPermission {
  const target = command.trim()
  const { effect, reason, writes } = classifyCommand(target, where)
  if (effect === 'read') return { name: 'shell', target, effect, sandboxed: false }
  const appears = writes.length ? `; apparent effects: ${writes.join(', ')}` : ''
  return { name: 'shell', target, effect, reason: `${reason}${appears}`, sandboxed: false }
}

/**
 * What the sandbox makes of a classified command. The kernel now guarantees what the
 * classifier could only guess: in `readOnly` mode the workspace is mounted read-only with
 * no network, so the command is a `read`; with no network it can change only the
 * workspace and its private /tmp, so it is a `write` (which `acceptEdits` allows).
 */
function confine(permission: ShellPermission, sandbox: ShellSandbox, readOnly: boolean, protection: () => string | undefined): ShellPermission {
  if (!sandbox.confined) return permission
  if (readOnly) {
    const confined = { ...permission, sandboxed: true }
    return permission.effect === 'read' ? confined : { ...confined, effect: 'read', reason: `${permission.reason}; in the sandbox with the workspace read-only and no network` }
  }
  const confined = { ...permission, sandboxed: true }
  // A line the classifier vouches for as a read writes nothing, protected or not.
  if (permission.effect === 'read') return confined
  // What the sandbox promises includes the protected paths: where one cannot be held, the
  // call does not claim to be sandboxed, so neither acceptEdits nor a `sandboxed` rule allows it.
  const problem = protection()
  if (problem) return { ...permission, sandboxed: false, effect: 'exec', reason: `${permission.reason}; and in the sandbox ${problem}` }
  if (sandbox.offline) return { ...confined, effect: 'write', reason: `${permission.reason}; in the sandbox, it can change only the workspace` }
  return confined
}

/** How a call will run, for its preview: `sandboxed (bubblewrap), no network`, or `not sandboxed: …`. */
function confinement(sandbox: ShellSandbox, readOnly: boolean): string {
  if (!sandbox.confined) {
    const why = sandbox.state === 'off' ? 'the sandbox is off' : `the sandbox is unavailable: ${(sandbox.support as { reason: string }).reason}`
    return `not sandboxed (${why}): it runs directly on the host as the bot's user, with its network`
  }
  if (readOnly) return 'sandboxed (bubblewrap), the workspace read-only, no network'
  const network = sandbox.allow ? `network only to ${sandbox.allow.join(', ')} (through a proxy)` : sandbox.offline ? 'no network' : 'the host\'s network'
  return `sandboxed (bubblewrap), only the workspace and a private /tmp writable, ${network}`
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`
}

const DESCRIPTION = `Run one shell command with bash in the workspace and wait for it to finish.
- Runs in the foreground in the session's working directory; nothing keeps running after the call.
- stdout and stderr are returned with the exit code; a non-zero exit code is a normal result. Long output keeps its beginning and end, with the omitted byte count in between.
- Read-only commands (ls, cat, head, wc, grep, find without -exec, git status/log/diff/show, …) run under the default rules; anything else asks for approval first. git is read-only only in the workspace's own repository.
- On timeout the command and all its child processes are terminated and the output so far is returned.`

// Time the tool needs after its own timeout to terminate a group and report, so its
// timeout fires before the call's deadline does.
const REPORT_MARGIN = 1000

/**
 * Creates the `bash` tool. Host-free: dispose `options.processes` (or the plugin) to
 * terminate commands still running.
 *
 * @example
 * const processes = new ProcessTable()
 * registry.define(createShellTool({ workspace: '/srv/repo', processes }))
 * // later
 * await processes.dispose()
 */
export function createShellTool(options: ShellToolOptions): Tool {
  const { workspace, shell = 'bash', headBytes = 16384, tailBytes = 16384, killGrace = 2000 } = options
  const maxTimeout = options.maxTimeout ?? 600_000
  const timeout = Math.min(options.timeout ?? 120_000, maxTimeout)
  if (typeof workspace !== 'string' || !workspace) {
    throw new ShellError('INVALID_OPTIONS', 'createShellTool() needs a workspace root')
  }
  if (!(timeout >= 1) || !(headBytes >= 0) || !(tailBytes >= 0)) {
    throw new ShellError('INVALID_OPTIONS', 'timeout must be at least 1 ms; headBytes and tailBytes must not be negative')
  }
  const processes = options.processes ?? new ProcessTable({ killGrace })
  let protectedPaths: ProtectedPaths
  try {
    protectedPaths = new ProtectedPaths(options.protected ?? DEFAULT_PROTECTED)
  } catch (error) {
    throw new ShellError('INVALID_OPTIONS', (error as Error).message, { cause: error })
  }
  const sandbox = new ShellSandbox(options.sandbox)
  sandbox.useWorkspace(workspace, protectedPaths)
  const env = sandbox.config.env === 'scrub' ? scrubEnvironment(process.env, options.env) : { ...process.env, ...options.env }
  const killBudget = killGrace + 2000 + REPORT_MARGIN
  const trustWorkspaceGit = options.trustWorkspaceGit ?? protectedPaths.coversRootGit()
  const where = (call: ToolCall): ClassifyOptions => ({ workspace, cwd: call.session.cwd, trustWorkspaceGit })
  // Calls whose permission was computed as `read`: if the command line is no longer read
  // when it is about to run (a file written in between), the tool asks first.
  const checkedRead = new WeakSet<ToolCall>()
  // Calls allowed as sandboxed writes: if a protected path cannot be held when it runs, it asks.
  const checkedHeld = new WeakSet<ToolCall>()
  const protectionProblem = () => {
    let root: string
    try {
      root = realpathSync.native(workspace)
    } catch {
      return undefined
    }
    return sandbox.protectionProblem(root)
  }
  return defineTool({
    name: options.name ?? 'bash',
    description: `${DESCRIPTION}\n${sandbox.describe()}`,
    args: Schema.object({
      command: Schema.string().min(1).max(65536).required().description('The command line, run as `bash -c`.'),
      timeout: Schema.natural().min(1).max(maxTimeout).default(timeout).description(`Milliseconds before the command is terminated (at most ${maxTimeout}).`),
    }),
    permission: ({ command }, call) => {
      sandbox.assertAllowed()
      const classified = shellPermission(command, where(call))
      if (classified.effect === 'read') checkedRead.add(call)
      else checkedRead.delete(call)
      const held = confine(classified, sandbox, call.mode === 'readOnly', protectionProblem)
      if (held.sandboxed && held.effect !== 'read' && call.mode !== 'readOnly') checkedHeld.add(call)
      else checkedHeld.delete(call)
      return held
    },
    traits: {
      effect: 'exec',
      parallel: false,
      // Above the largest timeout a call may ask for, so the tool's own timeout fires first.
      timeout: maxTimeout + killBudget,
      // Foreground only: a command handed to the background would have no way to be
      // followed or stopped from here.
      background: false,
    },
    // What the person asked sees: the whole command line, where it runs and how confined.
    preview: async ({ command, timeout }, call) => {
      let cwd: string
      try {
        cwd = await resolveWorkingDirectory(workspace, call.session.cwd)
      } catch (error) {
        if (!ShellError.is(error)) throw error
        return { command, text: `${call.name} will be refused (${error.code}): ${error.message}` }
      }
      return { command, text: `in ${cwd}, ${confinement(sandbox, call.mode === 'readOnly')}; stopped after ${formatSeconds(timeout)}` }
    },
    async run({ command, timeout }, call) {
      sandbox.assertAllowed()
      const cwd = await resolveWorkingDirectory(workspace, call.session.cwd)
      const root = await realpath(workspace)
      const readOnly = call.mode === 'readOnly'
      // Judged again as late as possible: a read runs with the read environment; a line
      // that stopped being read since its permission was checked asks first (unless the
      // workspace is mounted read-only, where that cannot matter).
      let runEnv = env
      const now = shellPermission(command, where(call))
      if (now.effect === 'read') runEnv = readEnvironment(env, root)
      else if (checkedRead.has(call) && !(readOnly && sandbox.confined)) await call.ask(`it was read-only when checked but is not now: ${now.reason}`, { preview: { command, text: `in ${cwd}, ${confinement(sandbox, readOnly)}` } })
      // Keep room before the call's deadline to terminate and still report the output.
      const left = Number.isFinite(call.deadline) ? call.deadline - Date.now() - killBudget : Infinity
      const limit = Math.max(1, Math.min(timeout, left))
      // A set-up that waits for another sandboxed command (sandbox-setup-gate.ts) waits no
      // longer than the command itself could run, and a cancelled call stops waiting.
      const wait = { signal: call.signal, deadline: Date.now() + limit }
      // Cancelled already: the table starts nothing and says so; no set-up to wait for.
      let prepared = sandbox.confined && !call.signal.aborted
        ? await sandbox.prepare({ workspace: root, cwd, readOnly, shell, command, env: runEnv, wait })
        : undefined
      if (prepared?.protectionProblem && checkedHeld.has(call)) {
        // Allowed as a sandboxed write, but a protected path cannot be held now: a person decides.
        const problem = prepared.protectionProblem
        await prepared.close()
        prepared = undefined
        await call.ask(`it was sandboxed when checked, but now ${problem}`, { preview: { command, text: `in ${cwd}, ${confinement(sandbox, readOnly)}` } })
        prepared = await sandbox.prepare({ workspace: root, cwd, readOnly, shell, command, env: runEnv, wait: { signal: call.signal, deadline: Date.now() + limit } })
      }
      const progress = new ProgressStream((message) => call.progress(message))
      try {
        const outcome = await processes.run({
          file: prepared?.command.file ?? shell,
          args: prepared?.command.args ?? ['-c', command],
          cwd,
          env: prepared?.command.env ?? runEnv,
          timeout: limit,
          signal: call.signal,
          onOutput: (_, chunk) => progress.push(chunk),
          headBytes,
          tailBytes,
          watch: prepared?.watch,
          fds: prepared?.fds,
          label: command,
        })
        const data: Record<string, unknown> = { command, cwd, ...outcome, sandbox: sandbox.state }
        if (prepared?.proxy) data.network = { allow: sandbox.allow, refused: [...prepared.proxy.refused] }
        let text = formatOutcome(outcome, limit)
        const swept = await prepared?.sweep()
        if (swept && (swept.removed.length || swept.left.length)) {
          data.protectedCreated = swept
          if (swept.removed.length) text += `\nRemoved the protected paths the command created (protected paths are read-only to commands): ${swept.removed.join(', ')}.`
          if (swept.left.length) text += `\nThe command created protected paths that could not be removed while another command runs: ${swept.left.join(', ')}.`
        }
        return { text, data }
      } finally {
        progress.close()
        await prepared?.close()
      }
    },
  })
}
