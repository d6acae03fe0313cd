import { readdirSync, readFileSync } from 'node:fs'
import { processRunning, statFields } from './process-group'

/**
 * One running sandbox seen from outside: bubblewrap's child is the init of the sandbox's
 * pid namespace, and everything the command starts lives in that namespace, whatever
 * session or process group it moves to. Killing bubblewrap kills that init (bubblewrap's
 * `--die-with-parent`), and the kernel then kills the whole namespace; this lets the
 * process table wait until it is really gone, and count what runs inside.
 */
export class SandboxNamespace {
  private init: number | undefined
  // The init's start time: a reused pid is not the namespace.
  private started: string | undefined

  constructor(private readonly bwrapPid: number) {}

  /** The namespace's init, once bubblewrap has started it; found through `/proc/<pid>/task/<pid>/children`. */
  initPid(): number | undefined {
    if (this.init === undefined) {
      try {
        const first = readFileSync(`/proc/${this.bwrapPid}/task/${this.bwrapPid}/children`, 'latin1').trim().split(' ')[0]
        if (first) {
          this.started = startTime(Number(first))
          if (this.started !== undefined) this.init = Number(first)
        }
      } catch {}
    }
    return this.init
  }

  /**
   * Whether bubblewrap has finished its set-up: its init forks the command only after
   * every mount is made.
   */
  commandStarted(): boolean {
    const init = this.initPid()
    if (init === undefined) return false
    try {
      return readFileSync(`/proc/${init}/task/${init}/children`, 'latin1').trim() !== ''
    } catch {
      return false
    }
  }

  /** Remembers the init while bubblewrap still runs, so `alive` can follow it after. */
  observe(): void {
    this.initPid()
  }

  /** Processes inside the namespace, counted in its own `/proc`; undefined before it exists or after it is gone. */
  count(): number | undefined {
    const init = this.initPid()
    if (init === undefined) return undefined
    try {
      let n = 0
      for (const entry of readdirSync(`/proc/${init}/root/proc`)) {
        const c = entry.charCodeAt(0)
        if (c >= 48 && c <= 57) n++
      }
      return n
    } catch {
      return undefined
    }
  }

  /**
   * Waits (at most `within` ms) while bubblewrap runs and its init is not there yet, then
   * kills the namespace. Killing bubblewrap alone is not enough while it starts: a child
   * whose parent dies before it has set `--die-with-parent` never gets that signal, and
   * its sandbox would run on.
   */
  async killSoon(within = 1000): Promise<void> {
    const until = Date.now() + within
    while (this.initPid() === undefined && Date.now() < until && processRunning(this.bwrapPid)) {
      await new Promise((resolve) => setTimeout(resolve, 2))
    }
    this.kill()
  }

  /** SIGKILLs the namespace's init, which makes the kernel kill everything inside. */
  kill(): void {
    if (this.init === undefined || !this.alive()) return
    try {
      process.kill(this.init, 'SIGKILL')
    } catch {}
  }

  /** Whether the namespace's init still runs (a zombie does not count): its processes are not all gone. */
  alive(): boolean {
    const init = this.init
    if (init === undefined) return false
    const fields = statFields(init)
    return fields !== undefined && fields[19] === this.started && fields[0] !== 'Z' && fields[0] !== 'X'
  }
}

function startTime(pid: number): string | undefined {
  return statFields(pid)?.[19]
}
