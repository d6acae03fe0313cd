import { realpathSync } from 'node:fs'
import { homedir } from 'node:os'
import { isAbsolute, relative, resolve } from 'node:path'
import { within } from './git-repository'
import type { SandboxConfig } from './sandbox-config'
import type { SandboxCommand } from './sandbox-command'
import type { SandboxNamespace } from './sandbox-namespace'
import { removeCreated, type ProtectedEntry, type ProtectedPaths, type ProtectedScan } from './sandbox-protected'
import { exposes, setupGate, type RunningSandbox, type SetupWait } from './sandbox-setup-gate'
import { ShellError } from './shell-error'

/** What the sweep after a command found: protected paths it created, removed or left. */
export interface ProtectedSweep {
  removed: string[]
  /** Created, but another sandboxed command could write the workspace meanwhile: left, and said so. */
  left: string[]
}

/** A set-up in progress: its command, and what to call once bubblewrap runs and once it ended. */
export interface MountedRun {
  command: SandboxCommand
  /** Set when some protected path could not be held read-only in this run. */
  problem?: string
  /** Follows bubblewrap (`namespace`) until its command starts, then ends the set-up's turn. */
  started(namespace: SandboxNamespace, bwrapRunning: () => boolean): void
  /** After the command (its namespace gone): removes the protected paths it created, where that is safe. */
  sweep(): Promise<ProtectedSweep>
  /** Ends the turn and the run's place among the running commands. */
  close(): void
}

const realOrResolved = (path: string) => {
  try {
    return realpathSync.native(path)
  } catch {
    return resolve(path)
  }
}

function realOrNothing(path: string): string | undefined {
  try {
    return realpathSync.native(path)
  } catch {
    return undefined
  }
}

// How often a set-up's turn looks whether bubblewrap's command has started.
const STARTED_EVERY = 2

/**
 * What a `bash` tool's sandbox mounts around the workspace beyond the fixed plan of
 * sandbox-command.ts: the protected paths read-only, the bot's home emptied, and the
 * checks that keep every destination out of a command's reach while bubblewrap makes it.
 */
export class WorkspaceMounts {
  /** Things the description must say: defaults that cannot be hidden here. */
  readonly caveats: string[] = []
  private readonly homeWritable: boolean = false
  // Protected entries a sweep found created but could not remove (`dev:ino`), for the next sweep.
  private readonly pending = new Set<string>()

  constructor(
    private readonly workspace: string,
    private readonly config: SandboxConfig,
    readonly protectedPaths: ProtectedPaths,
    private readonly home = homedir(),
  ) {
    const ws = realOrResolved(workspace)
    const writable = config.writable.map(realOrResolved).filter((path) => path !== '/')
    const roots = [ws, ...writable]
    const where = (path: string) => within(path, ws) ? 'the workspace' : 'a writable path'
    // A hidden path inside a writable one hides nothing: `mv .local .x`, and the next
    // command reads `.x/share/keyrings`.
    for (const entry of config.hidden) {
      const path = realOrResolved(isAbsolute(entry) ? entry : resolve(this.home, entry))
      if (roots.some((root) => within(path, root))) {
        throw new ShellError('INVALID_OPTIONS', `sandbox.hidden: ${entry} lies inside ${where(path)}, where a command can rename it and the next command reads it under another name; hide it by keeping it out of writable paths`)
      }
    }
    const realHome = realOrResolved(this.home)
    if (roots.some((root) => within(realHome, root))) {
      this.homeWritable = true
      this.caveats.push(`the bot's home ${realHome} lies inside ${where(realHome)}, so neither it nor the credential paths in it are hidden`)
    }
    if (config.dataDir) {
      const data = realOrResolved(config.dataDir)
      if (roots.some((root) => data !== root && within(data, root))) this.caveats.push(`the app's data directory ${data} lies inside ${where(data)}, so it is not hidden`)
    }
  }

  /** What the description says is read-only and hidden inside. */
  describe(): string {
    const patterns = this.protectedPaths.patterns
    const kept = patterns.length
      ? `the protected paths (${patterns.join(', ')}; a name without "/" at any depth) are read-only, and any a command creates is removed after it`
      : 'no path in the workspace is protected'
    const home = this.homeWritable
      ? 'nothing in the bot\'s home is hidden'
      : this.config.home === 'hidden'
        ? `the bot's home ${this.home} is empty inside (the workspace and writable paths in it excepted)`
        : 'in the bot\'s home only credential paths are hidden (~/.ssh, ~/.aws, ~/.config and the others docs/shell-tool.md lists; ~/.bashrc and other files stay readable)'
    return `${kept}; ${home}; the app's data directory, /run and /etc/shadow-like files are hidden`
  }

  /** The bot's real home, when it is emptied inside: not `/`, not inside a writable root. */
  private hiddenHome(roots: readonly string[]): string | undefined {
    if (this.config.home !== 'hidden') return undefined
    const home = realOrNothing(this.home)
    if (!home || home === '/' || roots.some((root) => within(home, root))) return undefined
    return home
  }

  /** The writable roots of a run: the real workspace (unless read-only) and the writable paths. */
  roots(root: string, readOnly: boolean): string[] {
    if (readOnly) return []
    const writable = this.config.writable.map(realOrNothing).filter((path): path is string => !!path && path !== '/' && !within(path, root))
    return [root, ...writable]
  }

  /** The protected entries of the real workspace `root`, and whether all of them can be held. */
  scan(root: string): ProtectedScan {
    return this.protectedPaths.scan(root, this.roots(root, false))
  }

  /**
   * Takes this process's set-up turn, walks the workspace for protected paths, builds the
   * command with `build`, and (on a bubblewrap that follows links) waits until no running
   * command could swap a folder on the way to one of its destinations. The turn lasts
   * until the command starts (`started`) or the run closes. `wait` (the call's signal and
   * timeout) bounds the waits: past it, a refusal, and nothing ran.
   */
  async setUp(root: string, readOnly: boolean, followsLinks: boolean, build: (extra: { protected: string[]; home?: string }) => SandboxCommand, wait?: SetupWait): Promise<MountedRun> {
    const endTurn = await setupGate.turn(wait)
    const roots = this.roots(root, readOnly)
    const self: RunningSandbox = { roots, mountPoints: new Set() }
    let leave: (() => void) | undefined
    let timer: NodeJS.Timeout | undefined
    const close = () => {
      if (timer) clearTimeout(timer)
      endTurn()
      leave?.()
      leave = undefined
    }
    try {
      const home = this.hiddenHome(roots)
      let scan: ProtectedScan = { entries: [] }
      let command: SandboxCommand
      for (;;) {
        if (!readOnly) scan = this.protectedPaths.scan(root, roots)
        command = build({ protected: [...new Set(scan.entries.map((entry) => entry.mount).filter(Boolean))], home })
        const destinations = command.destinations
        if (!followsLinks) break
        const blocked = (running: RunningSandbox) => destinations.some((destination) => exposes(running, destination))
        if (!setupGate.runningMatch(blocked, self)) break
        // Someone running could swap a folder on the way: wait until it ends, then look again.
        await setupGate.waitUntilNone(blocked, self, wait)
      }
      const before = scan.entries
      self.mountPoints = new Set(command.destinations)
      leave = setupGate.add(self)
      return {
        command,
        problem: scan.problem,
        started: (namespace, bwrapRunning) => {
          const look = () => {
            timer = undefined
            if (namespace.commandStarted() || !bwrapRunning()) return endTurn()
            timer = setTimeout(look, STARTED_EVERY)
          }
          look()
        },
        sweep: async () => {
          // Nothing of it runs any more (or it never started): a set-up waiting on it may go on.
          if (timer) clearTimeout(timer)
          endTurn()
          leave?.()
          leave = undefined
          if (readOnly || this.protectedPaths.empty) return { removed: [], left: [] }
          const end = await setupGate.turn()
          try {
            return this.sweep(root, roots, before, self)
          } finally {
            end()
          }
        },
        close,
      }
    } catch (error) {
      close()
      throw error
    }
  }

  private sweep(root: string, roots: readonly string[], before: readonly ProtectedEntry[], self: RunningSandbox): ProtectedSweep {
    const after = this.protectedPaths.scan(root, roots).entries
    const known = new Set(before.map((entry) => entry.id))
    // New since this command started, or left by an earlier sweep (a command that started
    // after it was made took it for the owner's).
    const created = after.filter((entry) => !known.has(entry.id) || this.pending.has(entry.id))
    if (!created.length) return { removed: [], left: [] }
    const rel = (entries: readonly ProtectedEntry[]) => entries.map((entry) => relative(root, entry.path))
    // Another command that can write here could swap a folder on the way while they are removed.
    if (setupGate.othersWrite(root, self)) {
      for (const entry of created) this.pending.add(entry.id)
      return { removed: [], left: rel(created) }
    }
    const { removed, left } = removeCreated(root, created)
    for (const entry of removed) this.pending.delete(entry.id)
    for (const entry of left) this.pending.add(entry.id)
    return { removed: rel(removed), left: rel(left) }
  }
}
