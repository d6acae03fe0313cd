import { mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs'
import { rmdir } from 'node:fs/promises'
import { join } from 'node:path'
import { processRunning } from './process-group'

/**
 * A pids cgroup per sandboxed command, for a bot running as root: the kernel does not hold
 * root to `RLIMIT_NPROC`, but it does hold every process of a cgroup to its `pids.max`, so a
 * fork bomb's forks fail at once, as they do for an ordinary user. The watchdog that counts
 * from outside (sandbox-namespace.ts) is the fallback: a bomb that starves the machine
 * starves the watchdog too.
 *
 * The cgroups go under the bot's own pids cgroup, found through `/proc/self/mountinfo` and
 * `/proc/self/cgroup`: cgroup v1's `pids` hierarchy, or cgroup v2 where the bot's cgroup
 * already delegates `pids` to its children. Where neither can be written (most containers,
 * a systemd service on cgroup v2), there is none.
 */
export class PidsCgroups {
  private next = 0

  private constructor(readonly base: string) {}

  /** The cgroup directory children can be made in, after a probe that makes and removes one; undefined where none can. */
  static detect(): PidsCgroups | undefined {
    if (process.platform !== 'linux') return undefined
    for (const base of candidates()) {
      const probe = join(base, `dogu-${process.pid}-probe`)
      try {
        mkdirSync(probe)
        try {
          writeFileSync(join(probe, 'pids.max'), '1')
        } finally {
          rmdirSync(probe)
        }
        removeStale(base)
        return new PidsCgroups(base)
      } catch {}
    }
  }

  /** A new cgroup holding at most `max` tasks (processes and threads). */
  create(max: number): RunCgroup {
    const dir = join(this.base, `dogu-${process.pid}-${++this.next}`)
    mkdirSync(dir)
    try {
      writeFileSync(join(dir, 'pids.max'), String(max))
    } catch (error) {
      rmdirSync(dir)
      throw error
    }
    return new RunCgroup(dir)
  }
}

// How long removal retries while the last processes of a finished command exit.
const REMOVE_TRIES = 50
const REMOVE_EVERY = 20

/** One command's cgroup. */
export class RunCgroup {
  constructor(readonly dir: string) {}

  /** The file a process writes its pid to, to enter the cgroup (with all it starts after). */
  get procs(): string {
    return join(this.dir, 'cgroup.procs')
  }

  /** Removes the cgroup; the kernel refuses while a process is still in it, so this retries for a second, then leaves it to the next start's clean-up. */
  async remove(): Promise<void> {
    for (let i = 0; i < REMOVE_TRIES; i++) {
      try {
        await rmdir(this.dir)
        return
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
        await new Promise((resolve) => setTimeout(resolve, REMOVE_EVERY))
      }
    }
  }
}

/** The bot's own pids cgroup directories: cgroup v1's pids hierarchy first, then v2. */
function candidates(): string[] {
  let mounts: string
  let own: string
  try {
    mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    own = readFileSync('/proc/self/cgroup', 'utf8')
  } catch {
    return []
  }
  const paths = new Map<string, string>()
  for (const line of own.split('\n')) {
    const [, controllers, path] = line.split(':', 3)
    if (path === undefined) continue
    if (controllers === '') paths.set('v2', path)
    else if (controllers.split(',').includes('pids')) paths.set('v1', path)
  }
  const found: string[] = []
  for (const line of mounts.split('\n')) {
    // mount-id parent major:minor root mount-point options … - type source super-options
    const [left, right] = line.split(' - ')
    if (!right) continue
    const fields = left.split(' ')
    const [type, , options = ''] = right.split(' ')
    // A mount whose root is not `/` shows a part of the hierarchy the paths above do not start at.
    if (fields[3] !== '/') continue
    const mountPoint = unescapeMount(fields[4])
    const v1 = paths.get('v1')
    const v2 = paths.get('v2')
    if (type === 'cgroup' && v1 !== undefined && options.split(',').includes('pids')) found.unshift(join(mountPoint, v1))
    else if (type === 'cgroup2' && v2 !== undefined) {
      const dir = join(mountPoint, v2)
      try {
        if (readFileSync(join(dir, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('pids')) found.push(dir)
      } catch {}
    }
  }
  return found
}

/** mountinfo escapes spaces, tabs, newlines and backslashes as octal. */
function unescapeMount(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, code: string) => String.fromCharCode(parseInt(code, 8)))
}

/** Removes the empty cgroups a bot that ended without cleaning up left behind (its pid is gone). */
function removeStale(base: string): void {
  for (const name of readdirSync(base)) {
    const pid = /^dogu-(\d+)-\d+$/.exec(name)?.[1]
    if (!pid || processRunning(Number(pid))) continue
    try {
      rmdirSync(join(base, name))
    } catch {}
  }
}
