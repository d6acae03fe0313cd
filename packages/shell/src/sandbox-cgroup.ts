import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs'
import { rmdir } from 'node:fs/promises'
import { join } from 'node:path'
import { processRunning } from './process-group'

/** The cgroup controllers a sandboxed command can be held by. */
export type CgroupController = 'pids' | 'memory'

/**
 * Where the cgroups of sandboxed commands are made for one controller: the bot's own
 * cgroup, found through `/proc/self/mountinfo` and `/proc/self/cgroup` (cgroup v1's
 * hierarchy of that controller, or cgroup v2 where the bot's cgroup already delegates it
 * to its children), if the bot can make a child there, set its limit and enter it. Where
 * it cannot (most containers, a systemd service on cgroup v2 without `Delegate=`), there
 * is none, and the sandbox falls back to a watchdog.
 *
 * - `pids`, for a bot running as root: the kernel does not hold root to `RLIMIT_NPROC`,
 *   but it holds every process of a cgroup to its `pids.max`, so a fork bomb's forks fail
 *   at once, as they do for an ordinary user.
 * - `memory`, for any bot: the kernel holds the command's processes together (and what
 *   they keep in its tmpfs) to the limit, and its OOM killer acts inside the cgroup only,
 *   never on the bot.
 */
export class CgroupParent {
  private constructor(readonly base: string, readonly controller: CgroupController, readonly version: 1 | 2) {}

  /** The bot's cgroup of `controller`, after a probe that makes, limits, enters and removes a child; undefined where none can. */
  static detect(controller: CgroupController): CgroupParent | undefined {
    if (process.platform !== 'linux') return undefined
    for (const { base, version } of candidates(controller)) {
      const parent = new CgroupParent(base, controller, version)
      const probe = join(base, `dogu-${process.pid}-probe-${controller}`)
      try {
        mkdirSync(probe)
        try {
          parent.limit(probe, controller === 'pids' ? 1 : 1024 * 1024 * 1024)
          // Entering needs more than making: v2 asks for write access to the common ancestor.
          const entered = spawnSync('/bin/sh', ['-c', 'echo $$ > "$0"', join(probe, 'cgroup.procs')], { stdio: 'ignore', timeout: 5000 })
          if (entered.status !== 0) throw new Error('cannot enter')
        } finally {
          rmdirSync(probe)
        }
        removeStale(base)
        return parent
      } catch {}
    }
  }

  /** Writes this controller's limit into the cgroup `dir`. */
  limit(dir: string, value: number): void {
    if (this.controller === 'pids') return writeFileSync(join(dir, 'pids.max'), String(value))
    if (this.version === 1) {
      writeFileSync(join(dir, 'memory.limit_in_bytes'), String(value))
      // Memory and swap together, where swap is accounted: swap is no way around the limit.
      optional(join(dir, 'memory.memsw.limit_in_bytes'), String(value))
    } else {
      writeFileSync(join(dir, 'memory.max'), String(value))
      optional(join(dir, 'memory.swap.max'), '0')
      // The OOM killer takes the whole command, not one process of it.
      optional(join(dir, 'memory.oom.group'), '1')
    }
  }
}

let next = 0

/**
 * One command's cgroups, made under `parents` with `limits` (a controller with no parent
 * or no limit is left out). On cgroup v2 one directory holds both controllers.
 */
export function createRunCgroup(parents: readonly CgroupParent[], limits: Partial<Record<CgroupController, number>>): RunCgroup {
  const byBase = new Map<string, CgroupParent[]>()
  for (const parent of parents) {
    if (!limits[parent.controller]) continue
    const list = byBase.get(parent.base) ?? []
    list.push(parent)
    byBase.set(parent.base, list)
  }
  const n = ++next
  const made: string[] = []
  let memory: { dir: string; version: 1 | 2 } | undefined
  try {
    for (const [base, list] of byBase) {
      const dir = join(base, `dogu-${process.pid}-${n}`)
      mkdirSync(dir)
      made.push(dir)
      for (const parent of list) {
        parent.limit(dir, limits[parent.controller]!)
        if (parent.controller === 'memory') memory = { dir, version: parent.version }
      }
    }
  } catch (error) {
    for (const dir of made) rmdirSync(dir)
    throw error
  }
  return new RunCgroup(made, memory)
}

// How long removal retries while the last processes of a finished command exit.
const REMOVE_TRIES = 50
const REMOVE_EVERY = 20

/** One command's cgroups: one directory per hierarchy (two on cgroup v1, one on v2). */
export class RunCgroup {
  constructor(readonly dirs: readonly string[], private readonly memory?: { dir: string; version: 1 | 2 }) {}

  /** The files a process writes its pid to, to enter the cgroups (with all it starts after). */
  get procs(): string[] {
    return this.dirs.map((dir) => join(dir, 'cgroup.procs'))
  }

  /** How many processes the kernel's OOM killer ended in the memory cgroup; 0 without one. */
  oomKills(): number {
    if (!this.memory) return 0
    try {
      // v1 `memory.oom_control` and v2 `memory.events` both have an `oom_kill N` line.
      const text = readFileSync(join(this.memory.dir, this.memory.version === 1 ? 'memory.oom_control' : 'memory.events'), 'utf8')
      return Number(/^oom_kill (\d+)$/m.exec(text)?.[1] ?? 0)
    } catch {
      return 0
    }
  }

  /** Removes the cgroups; the kernel refuses while a process is still in one, so this retries for a second, then leaves it to the next start's clean-up. */
  async remove(): Promise<void> {
    await Promise.all(this.dirs.map(removeDir))
  }
}

async function removeDir(dir: string): Promise<void> {
  for (let i = 0; i < REMOVE_TRIES; i++) {
    try {
      await rmdir(dir)
      return
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
      await new Promise((resolve) => setTimeout(resolve, REMOVE_EVERY))
    }
  }
}

function optional(file: string, value: string): void {
  if (existsSync(file)) writeFileSync(file, value)
}

/** The bot's own cgroup directories of `controller`: cgroup v1's hierarchy first, then v2. */
function candidates(controller: CgroupController): { base: string; version: 1 | 2 }[] {
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
    else if (controllers.split(',').includes(controller)) paths.set('v1', path)
  }
  const found: { base: string; version: 1 | 2 }[] = []
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
    if (type === 'cgroup' && v1 !== undefined && options.split(',').includes(controller)) found.unshift({ base: join(mountPoint, v1), version: 1 })
    else if (type === 'cgroup2' && v2 !== undefined) {
      const dir = join(mountPoint, v2)
      try {
        if (readFileSync(join(dir, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes(controller)) found.push({ base: dir, version: 2 })
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
    const pid = /^dogu-(\d+)-(?:\d+|probe-\w+)$/.exec(name)?.[1]
    if (!pid || processRunning(Number(pid))) continue
    try {
      rmdirSync(join(base, name))
    } catch {}
  }
}
