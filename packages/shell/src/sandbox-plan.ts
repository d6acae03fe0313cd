import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, openSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { checkAllowlist, startNetworkProxy, type NetworkProxy } from './network-proxy'
import { detectSandbox, findProgram, type SandboxSupport } from './detect-sandbox'
import { hiddenPaths } from './hidden-paths'
import type { RunWatch } from './process-table'
import { SandboxConfig, type SandboxOptions } from './sandbox-config'
import { forwarderListen, sandboxCommand, type SandboxCommand } from './sandbox-command'
import { SandboxNamespace } from './sandbox-namespace'
import { WorkspaceMounts, type MountedRun, type ProtectedSweep } from './sandbox-mounts'
import { ProtectedPaths } from './sandbox-protected'
import type { SetupWait } from './sandbox-setup-gate'
import { processRunning } from './process-group'
import { CgroupParent, createRunCgroup, type CgroupController, type RunCgroup } from './sandbox-cgroup'
import { residentBytes } from './namespace-memory'
import { ShellError } from './shell-error'

/** What `data.sandbox` says of a call: confined by bubblewrap, unconfined because it could not be, or unconfined by config. */
export type SandboxState = 'full' | 'unavailable' | 'off'

// How often the process count of a root bot's sandbox is checked (see SANDBOX_UID).
const WATCH_INTERVAL = 20

// Detected once per process and controller (pids only for a root bot: an ordinary user has RLIMIT_NPROC).
const cgroupParents = new Map<CgroupController, CgroupParent | undefined>()
function cgroupParent(controller: CgroupController): CgroupParent | undefined {
  if (!cgroupParents.has(controller)) cgroupParents.set(controller, CgroupParent.detect(controller))
  return cgroupParents.get(controller)
}

// Runs bubblewrap inside the command's cgroups: the shell enters each (the files up to
// `--`), then becomes bubblewrap.
const ENTER_CGROUP = 'while [ "$1" != -- ]; do echo $$ > "$1" || { echo "dogu sandbox: could not enter its cgroup $1" >&2; exit 125; }; shift; done; shift; exec "$@"'

const GiB = 1024 ** 3
const MiB = 1024 ** 2
function formatBytes(n: number): string {
  return n % GiB === 0 ? `${n / GiB} GiB` : n % MiB === 0 ? `${n / MiB} MiB` : `${n} bytes`
}

/**
 * The sandbox of one `bash` tool: config resolved, bubblewrap detected once, and per call
 * the confined command line, its network proxy and its watchdog.
 */
export class ShellSandbox {
  readonly config: SandboxConfig
  readonly support: SandboxSupport
  readonly state: SandboxState
  private readonly hidden: string[]
  /** The allowlist in force, or undefined; a list cannot be enforced without socat, and then the network is `none`. */
  readonly allow: readonly string[] | undefined
  /** Things the owner should know that weaken the sandbox (no prlimit), for the description. */
  readonly caveats: string[] = []
  /**
   * How `limits.processes` is held: by the kernel (`RLIMIT_NPROC` for an ordinary user, a
   * pids cgroup for root where one can be made), or by a watchdog counting from outside.
   */
  readonly processLimit: 'rlimit' | 'cgroup' | 'watchdog' | 'none'
  /**
   * How `limits.memory` is held: by a memory cgroup (the kernel's limit, its OOM killer
   * inside the command only), or by a watchdog summing the processes' resident memory.
   */
  readonly memoryLimit: 'cgroup' | 'watchdog' | 'none'
  private readonly cgroups: CgroupParent[]

  /** `internal.pidsCgroups` / `memoryCgroups: false` leave that limit to its watchdog, for its tests. */
  constructor(config: SandboxOptions | undefined, internal: { pidsCgroups?: boolean; memoryCgroups?: boolean } = {}) {
    try {
      this.config = SandboxConfig(config ?? {})
    } catch (error) {
      throw new ShellError('INVALID_OPTIONS', `sandbox: ${(error as Error).message}`, { cause: error })
    }
    const { network, mode } = this.config
    if (Array.isArray(network)) {
      const problem = checkAllowlist(network)
      if (problem) throw new ShellError('INVALID_OPTIONS', `sandbox.network: ${problem}`)
    }
    this.support = mode === 'off' ? { available: false, reason: 'sandbox.mode is off' } : detectSandbox(this.config.bwrapPath)
    this.state = mode === 'off' ? 'off' : this.support.available ? 'full' : 'unavailable'
    this.hidden = hiddenPaths(this.config.hidden, this.config.dataDir)
    const support = this.support
    this.allow = Array.isArray(network) && support.available && support.socat ? network : undefined
    const root = process.getuid?.() === 0
    const { processes, memory } = this.config.limits
    const pids = root && support.available && processes > 0 && internal.pidsCgroups !== false ? cgroupParent('pids') : undefined
    const memoryCgroup = support.available && memory > 0 && internal.memoryCgroups !== false ? cgroupParent('memory') : undefined
    this.cgroups = [pids, memoryCgroup].filter((parent) => parent !== undefined)
    this.processLimit = !support.available || processes === 0 ? 'none' : !root ? (support.prlimit ? 'rlimit' : 'none') : pids ? 'cgroup' : 'watchdog'
    this.memoryLimit = !support.available || memory === 0 ? 'none' : memoryCgroup ? 'cgroup' : 'watchdog'
    if (support.available) {
      if (!support.prlimit) this.caveats.push('resource limits are not applied (util-linux prlimit was not found)')
      if (Array.isArray(network) && !support.socat) this.caveats.push('the network allowlist needs socat, which was not found, so there is no network')
      // Its forwarder then runs inside, with Unix sockets allowed (see prepare()).
      if (this.allow && !(root && support.nsenter)) this.caveats.push('with the allowlist, a command can connect to the Unix sockets the bot\'s user may connect to, outside /run, /var/run, /tmp and the hidden paths')
      if (!support.seccomp) this.caveats.push(`no seccomp filter on ${process.arch} here, so setuid bits and Unix sockets are not refused`)
    }
  }

  private mounts: WorkspaceMounts | undefined

  /**
   * Ties the sandbox to its tool's workspace and the fs tools' `protected` list: refuses a
   * `hidden` entry inside a writable path (it would hide nothing) and notes the defaults
   * that cannot be hidden there.
   */
  useWorkspace(workspace: string, protectedPaths: ProtectedPaths): void {
    this.mounts = new WorkspaceMounts(workspace, this.config, protectedPaths)
    if (this.support.available) this.caveats.push(...this.mounts.caveats)
  }

  /**
   * Why some protected path of the real workspace `root` cannot be held read-only in the
   * sandbox now, or undefined: a command then cannot be promised to leave it alone.
   */
  protectionProblem(root: string): string | undefined {
    return this.confined && this.mounts ? this.mounts.scan(root).problem : undefined
  }

  /** How the bubblewrap set-up is kept from following a planted link, for the description. */
  private describeSetup(): string {
    const support = this.support as Extract<SandboxSupport, { available: true }>
    return support.followsLinks
      ? ' This bubblewrap follows links while it sets up (bubblewrap before 0.12, found by a probe at start), so a set-up whose mounts lie below a folder a running command can write waits until that command ends.'
      : ''
  }

  // Found shells by PATH: a lookup walks PATH with a syscall per entry, on every call otherwise.
  private shells = new Map<string, boolean>()

  private shellFound(shell: string, path: string | undefined): boolean {
    const key = `${shell}\0${path}`
    let found = this.shells.get(key)
    if (found === undefined) {
      found = !!findProgram(shell, path)
      // Only a hit is kept: a shell installed later is found on the next call.
      if (found) this.shells.set(key, found)
    }
    return found
  }

  /** Whether calls run confined. */
  get confined(): boolean {
    return this.state === 'full'
  }

  /** Whether a confined call has no network at all (`none`, or an allowlist it cannot enforce). */
  get offline(): boolean {
    return this.config.network === 'none' || (Array.isArray(this.config.network) && !this.allow)
  }

  /** Throws `SANDBOX_REQUIRED` when the owner requires a sandbox that is not there. */
  assertAllowed(): void {
    if (this.config.mode === 'required' && !this.confined) {
      const why = this.support.available ? 'it is off' : this.support.reason
      throw new ShellError('SANDBOX_REQUIRED', `the sandbox is required (sandbox.mode: required) but unavailable: ${why}. No command runs unsandboxed.`)
    }
  }

  /** One line for the tool's description: `sandbox: full …` or `sandbox: unavailable (why) …`. */
  describe(): string {
    if (this.state === 'off') return '- sandbox: off. Commands run directly on the host, as the bot\'s user.'
    if (this.state === 'unavailable') {
      const why = (this.support as { reason: string }).reason
      return this.config.mode === 'required'
        ? `- sandbox: unavailable (${why}). The owner requires it, so every command is refused.`
        : `- sandbox: unavailable (${why}). Commands run directly on the host, as the bot's user.`
    }
    const network = this.allow ? `network only to ${this.allow.join(', ')} through HTTP(S)_PROXY` : this.config.network === 'host' ? 'the host\'s network' : 'no network'
    const caveats = this.caveats.length ? ` Note: ${this.caveats.join('; ')}.` : ''
    const mounts = this.mounts?.describe() ?? 'credential paths are hidden (docs/shell-tool.md lists them)'
    return `- sandbox: full (bubblewrap). Only the workspace and a private /tmp are writable; ${mounts}; ${network}; the bot's other processes are out of reach.${this.describeMemory()}${this.describeSetup()}${caveats}`
  }

  /** The memory sentence of the description: what holds `limits.memory` here. */
  private describeMemory(): string {
    const { memory } = this.config.limits
    if (this.memoryLimit === 'cgroup') return ` A command's processes together may use ${formatBytes(memory)} of memory (a memory cgroup); past it the command is stopped.`
    if (this.memoryLimit === 'watchdog') return ` A command's processes together may use about ${formatBytes(memory)} of resident memory (checked every ${WATCH_INTERVAL} ms, no memory cgroup here); past it the command is stopped.`
    return ' No limit on a command\'s total memory (sandbox.limits.memory is 0).'
  }

  /**
   * Starts what a confined call needs and gives its command line and watchdog; `close`
   * stops the proxy and removes its socket. `readOnly` (the session's readOnly mode) mounts
   * the workspace read-only and takes the network away.
   */
  async prepare(request: { workspace: string; cwd: string; readOnly: boolean; shell: string; command: string; env: NodeJS.ProcessEnv; wait?: SetupWait }): Promise<PreparedRun> {
    const support = this.support
    if (!support.available) throw new ShellError('SANDBOX_REQUIRED', 'the sandbox is unavailable')
    // bubblewrap would start and then fail to run it: say so as the unsandboxed spawn does.
    if (!this.shellFound(request.shell, request.env.PATH)) throw new ShellError('SPAWN_FAILED', `could not start ${request.shell}: not found`)
    let proxy: NetworkProxy | undefined
    let dir: string | undefined
    let filter: number | undefined
    let forwarder: OutsideForwarder | undefined
    let cgroup: RunCgroup | undefined
    let mounted: MountedRun | undefined
    const close = async () => {
      mounted?.close()
      if (filter !== undefined) closeSync(filter)
      filter = undefined
      forwarder?.stop()
      await proxy?.close()
      if (dir) await rm(dir, { recursive: true, force: true })
      await cgroup?.remove()
    }
    try {
      let network: 'none' | 'host' | { proxySocket: string; forwarder: 'inside' | 'outside' } = this.config.network === 'host' ? 'host' : 'none'
      if (this.allow && !request.readOnly) {
        // A private directory, so nobody else on the machine can use the proxy.
        dir = await mkdtemp(join(tmpdir(), 'dogu-proxy-'))
        proxy = await startNetworkProxy({ socketPath: join(dir, 'proxy.sock'), allow: this.allow })
        // A root bot can enter the sandbox's network namespace from outside: the forwarder
        // then runs there, outside the seccomp filter, and the command gets no Unix socket.
        const outside = process.getuid?.() === 0 && !!support.nsenter
        network = { proxySocket: proxy.socketPath, forwarder: outside ? 'outside' : 'inside' }
        if (outside) forwarder = new OutsideForwarder(support.nsenter!, support.socat!, proxy.socketPath)
      } else if (request.readOnly) network = 'none'
      // A forwarder inside connects to the proxy's Unix socket: it gets the filter that
      // allows them (the proxy is the only socket it can see besides the ones not hidden).
      const unixSockets = typeof network === 'object' && network.forwarder === 'inside'
      if (support.seccomp) filter = openSync(unixSockets ? support.seccomp.unixSockets : support.seccomp.strict, 'r')
      const mounts = this.mounts ??= new WorkspaceMounts(request.workspace, this.config, new ProtectedPaths())
      const seccomp = filter !== undefined
      mounted = await mounts.setUp(request.workspace, request.readOnly, support.followsLinks, (extra) => sandboxCommand({
        support,
        ...request,
        network,
        writable: this.config.writable,
        hidden: this.hidden,
        limits: this.config.limits,
        seccomp,
        ...extra,
      }), request.wait)
      const command = mounted.command
      const limit = this.config.limits.processes
      // A root bot's sandbox maps to root outside, where RLIMIT_NPROC does not hold: a pids
      // cgroup holds it instead (besides the command: bubblewrap and the namespace's init),
      // or else a watchdog counts in the pid namespace and stops it past the limit.
      // The memory cgroup holds everything bubblewrap starts, itself included (a few MB).
      const memory = this.config.limits.memory
      if (this.cgroups.length) cgroup = createRunCgroup(this.cgroups, { pids: limit + 2, memory })
      const run = cgroup ? { ...command, file: '/bin/sh', args: ['-c', ENTER_CGROUP, 'dogu-sandbox', ...cgroup.procs, '--', command.file, ...command.args] } : command
      const counts = this.processLimit === 'watchdog'
      const weighs = this.memoryLimit === 'watchdog'
      const cgroupMemory = this.memoryLimit === 'cgroup' ? cgroup : undefined
      const memoryExceeded = `more than ${formatBytes(memory)} of memory, all its processes together (sandbox.limits.memory)`
      const watch = (pid: number): RunWatch => {
        const namespace = new SandboxNamespace(pid)
        mounted?.started(namespace, () => processRunning(pid))
        forwarder?.start(namespace)
        return {
          interval: WATCH_INTERVAL,
          check: () => {
            namespace.observe()
            // The kernel's OOM killer ended a process of the command: the rest goes too, and
            // the result says why (on cgroup v1 it kills one process, not the command).
            if (cgroupMemory && cgroupMemory.oomKills() > 0) {
              namespace.kill()
              return memoryExceeded
            }
            if (weighs) {
              const init = namespace.initPid()
              if (init !== undefined && namespace.alive() && residentBytes(init) > memory) {
                namespace.kill()
                return memoryExceeded
              }
            }
            if (!counts) return undefined
            const n = namespace.count()
            if (n === undefined || n <= limit + 1) return undefined
            // Killed now, not after the table's SIGTERM grace: a fork bomb grows meanwhile.
            namespace.kill()
            return `more than ${limit} processes (sandbox.limits.processes)`
          },
          alive: () => namespace.alive(),
          kill: () => namespace.killSoon(),
        }
      }
      const { problem, sweep } = mounted
      return { command: run, watch, proxy, close, fds: filter === undefined ? [] : [filter], protectionProblem: problem, sweep }
    } catch (error) {
      await close()
      throw error
    }
  }
}

export interface PreparedRun {
  command: SandboxCommand
  /** Descriptors the sandbox inherits as fd 3, …: the seccomp filter. */
  fds: number[]
  /** The watchdog for the bubblewrap process `pid`. */
  watch(pid: number): RunWatch
  proxy?: NetworkProxy
  /** Set when some protected path could not be held read-only in this run. */
  protectionProblem?: string
  /** After the command: removes the protected paths it created, where no other command could interfere. */
  sweep(): Promise<ProtectedSweep>
  close(): Promise<void>
}

// How long the forwarder outside looks for the sandbox's init, and how often.
const FIND_INIT_FOR = 5000
const FIND_INIT_EVERY = 2

/**
 * `socat` in the sandbox's network namespace and nothing else of it (`nsenter -U -n`): it
 * listens on the sandbox's loopback and connects to the proxy's socket on the host's file
 * system, where the command cannot follow. Started once bubblewrap has made the namespace;
 * the command's wrapper waits for the port. Root only: an unprivileged user cannot join a
 * network namespace that bubblewrap's nested user namespace owns.
 */
class OutsideForwarder {
  private child: ChildProcess | undefined
  private timer: NodeJS.Timeout | undefined
  private stopped = false
  private readonly onExit = () => this.stop()

  constructor(private readonly nsenter: string, private readonly socat: string, private readonly socket: string) {}

  start(namespace: SandboxNamespace): void {
    const until = Date.now() + FIND_INIT_FOR
    const attempt = () => {
      this.timer = undefined
      if (this.stopped) return
      const init = namespace.initPid()
      if (init === undefined) {
        if (Date.now() < until) this.timer = setTimeout(attempt, FIND_INIT_EVERY)
        return
      }
      this.child = spawn(this.nsenter, ['-t', String(init), '-U', '-n', '--preserve-credentials', '--', this.socat, forwarderListen(), `UNIX-CONNECT:${this.socket}`], { stdio: 'ignore' })
      // A failure shows inside as the wrapper's "the network forwarder did not start".
      this.child.on('error', () => {})
      process.once('exit', this.onExit)
    }
    attempt()
  }

  stop(): void {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    process.off('exit', this.onExit)
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL')
  }
}
