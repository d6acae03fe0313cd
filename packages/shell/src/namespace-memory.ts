import { readdirSync, readFileSync } from 'node:fs'

/**
 * The resident memory of a sandbox's processes together, in bytes: its init and every
 * descendant, found through `/proc/<pid>/task/<tid>/children` (orphans are reparented to
 * the init, so none is missed), each one's `VmRSS`. Shared pages count once per process,
 * so this errs high; pages in the sandbox's tmpfs that no process maps are not counted
 * (`limits.tmpSize` bounds those). The fallback of `limits.memory` where no memory cgroup
 * can be made; readable by an ordinary user, whose sandbox has its own uid.
 */
export function residentBytes(init: number): number {
  let total = 0
  const queue = [init]
  const seen = new Set<number>()
  while (queue.length) {
    const pid = queue.pop()!
    if (seen.has(pid)) continue
    seen.add(pid)
    total += residentOf(pid)
    let tasks: string[] = []
    try {
      tasks = readdirSync(`/proc/${pid}/task`)
    } catch {}
    for (const tid of tasks) {
      try {
        for (const child of readFileSync(`/proc/${pid}/task/${tid}/children`, 'latin1').split(' ')) if (child) queue.push(Number(child))
      } catch {}
    }
  }
  return total
}

/** A process's `VmRSS` (kB in `/proc/<pid>/status`) in bytes; 0 once it is gone. */
function residentOf(pid: number): number {
  try {
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'))?.[1]
    return kb ? Number(kb) * 1024 : 0
  } catch {
    return 0
  }
}
