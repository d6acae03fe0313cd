import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { isAbsolute, join, relative, resolve } from 'node:path'

/** What `DIR/.lock` holds: who uses the data folder, since when. */
export interface DataLockInfo {
  pid: number
  /** ISO time. */
  startedAt: string
}

/** Thrown by `lockDataDir` when a running process holds the folder's lock. */
export class DataInUseError extends Error {
  readonly code = 'data_in_use'
  constructor(readonly dir: string, readonly holder: DataLockInfo) {
    super(`${shown(dir)}/ is in use by another playground (pid ${holder.pid}, started ${localTime(holder.startedAt)}). `
      + 'Stop it, or give this one its own folder: yarn start --data other-data (or DOGU_DATA=other-data).')
  }

  static is(error: unknown): error is DataInUseError {
    return error instanceof DataInUseError
  }
}

/**
 * Takes `DIR/.lock` for this process, so two playgrounds never share one grants file and
 * workspace. A lock whose process no longer runs is taken over, told through `info`.
 * Returns the release, which removes the lock if it is still ours; a second call does nothing.
 */
export function lockDataDir(dir: string, info: (text: string) => void): () => void {
  dir = resolve(dir)
  mkdirSync(dir, { recursive: true })
  const path = join(dir, '.lock')
  const mine = JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString() } satisfies DataLockInfo)
  // Two tries: the second follows the removal of a stale lock.
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(path, mine, { flag: 'wx' })
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt) throw error
    }
    const text = readText(path)
    const held = parse(text)
    if (held && running(held.pid)) throw new DataInUseError(dir, held)
    // Removed only if unchanged since read: another starter may have taken it over meanwhile.
    if (readText(path) === text) rmSync(path, { force: true })
    info(held
      ? `${shown(dir)}/.lock was left by pid ${held.pid} (started ${localTime(held.startedAt)}), which no longer runs: taking it over.`
      : `${shown(dir)}/.lock could not be read: taking it over.`)
  }
  // A process that ends without disposing (an uncaught error, process.exit) still lets go.
  const release = () => {
    process.off('exit', release)
    if (readText(path) === mine) rmSync(path, { force: true })
  }
  process.on('exit', release)
  return release
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return undefined
  }
}

function parse(text: string | undefined): DataLockInfo | undefined {
  try {
    const value = JSON.parse(text ?? '')
    return Number.isInteger(value?.pid) && value.pid > 0 ? { pid: value.pid, startedAt: String(value.startedAt) } : undefined
  } catch {
    return undefined
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code !== 'ESRCH'
  }
}

/** The folder as the user typed it: relative to the working directory when inside it. */
function shown(dir: string): string {
  const path = relative(process.cwd(), dir)
  return path && !path.startsWith('..') && !isAbsolute(path) ? path : dir
}

/** `2026-12-01 13:40:02`, local time; the text itself if it is not a time. */
function localTime(iso: string): string {
  const date = new Date(iso)
  if (Number.isNaN(date.getTime())) return iso
  const pad = (n: number) => String(n).padStart(2, '0')
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
}
