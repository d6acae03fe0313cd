import { readdirSync, readFileSync } from 'node:fs'

/** How the process table signals and probes a process group; replaceable in tests. */
export interface GroupControl {
  /** Sends `signal` to every process in group `pgid`. */
  signal(pgid: number, signal: NodeJS.Signals): void
  /** Whether any process of group `pgid` is still running (zombies do not count). */
  alive(pgid: number): boolean
}

export const groupControl: GroupControl = {
  signal(pgid, signal) {
    try {
      process.kill(-pgid, signal)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error
    }
  },
  alive(pgid) {
    try {
      process.kill(-pgid, 0)
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM'
    }
    // kill(0) also succeeds for zombies, which an init that does not reap leaves behind;
    // on Linux, look for a member that is not one.
    return process.platform === 'linux' ? hasLiveMember(pgid) : true
  },
}

function hasLiveMember(pgid: number): boolean {
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return true
  }
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue
    const fields = statFields(entry)
    if (fields && Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true
  }
  return false
}

/**
 * `/proc/<pid>/stat` after the command name: state is [0], ppid [1], pgrp [2], start time
 * [19]. "pid (comm) state …": comm may contain spaces and parentheses. Undefined when gone.
 */
/** Whether process `pid` runs: it exists and is not a zombie. */
export function processRunning(pid: number): boolean {
  const fields = statFields(pid)
  return fields !== undefined && fields[0] !== 'Z' && fields[0] !== 'X'
}

export function statFields(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}
