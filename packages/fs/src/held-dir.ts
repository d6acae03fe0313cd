import { closeSync, constants, fstatSync, openSync, statSync } from 'node:fs'
import { type FileHandle, lstat, open } from 'node:fs/promises'
import { join } from 'node:path'
import { FsError } from './errors'

const O_DIRECTORY = constants.O_DIRECTORY ?? 0
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0
/** A directory below a held one: never through a link (a link there is `ENOTDIR` or `ELOOP`). */
export const DIR_FLAGS = constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW

let procFd: boolean | undefined

/**
 * Whether `/proc/self/fd/N/name` works here as `openat(N, name)`: Linux with `/proc`
 * mounted. The descriptor's magic link jumps to the open directory itself, whatever
 * its path has become, and only `name` is looked up in it.
 */
export function heldDirectories(): boolean {
  if (procFd === undefined) {
    procFd = false
    if (process.platform === 'linux') {
      let fd: number | undefined
      try {
        fd = openSync('/', constants.O_RDONLY | O_DIRECTORY)
        const held = fstatSync(fd)
        const seen = statSync(`/proc/self/fd/${fd}/.`)
        procFd = held.ino === seen.ino && held.dev === seen.dev
      } catch {
        procFd = false
      } finally {
        if (fd !== undefined) closeSync(fd)
      }
    }
  }
  return procFd
}

/** @internal For tests of the path-based fallback: force it (`false`) or detect again (`undefined`). */
export function setHeldDirectories(value: boolean | undefined): void {
  procFd = value
}

/** The refusal when a checked directory (or file) was replaced after the check. */
export function changedError(display: string, cause?: unknown): FsError {
  return new FsError('CHANGED', `${display}: a directory on its path was replaced (by a symbolic link or another file) after it was checked; nothing was done. Try again.`, { cause })
}

/**
 * A directory held open, like Go's `os.Root`: names below it are looked up in it, not by
 * its path, so moving it or swapping a link in for one of its parents changes nothing.
 * Where `/proc/self/fd` is missing, it falls back to the path (checked for links as it is
 * opened, which a local process can still race).
 */
export class HeldDir {
  private constructor(private handle: FileHandle | undefined, readonly abs: string) {}

  /** The descriptor, when held. */
  get fd(): number | undefined {
    return this.handle?.fd
  }

  /** A path naming `name` (one component) inside this directory. */
  at(name: string): string {
    return this.handle ? `/proc/self/fd/${this.handle.fd}/${name}` : join(this.abs, name)
  }

  /** A path naming this directory itself (for `readdir`). */
  self(): string {
    return this.handle ? `/proc/self/fd/${this.handle.fd}` : this.abs
  }

  /** Opens the subdirectory `name`, never through a link; this one stays open. */
  async child(name: string, display: string): Promise<HeldDir> {
    const abs = join(this.abs, name)
    if (!this.handle) {
      const info = await lstat(abs).catch((error) => { throw descentError(error, display) })
      if (!info.isDirectory()) throw changedError(display)
      return new HeldDir(undefined, abs)
    }
    const handle = await open(this.at(name), DIR_FLAGS).catch((error) => { throw descentError(error, display) })
    return new HeldDir(handle, abs)
  }

  async close(): Promise<void> {
    const handle = this.handle
    this.handle = undefined
    await handle?.close().catch(() => {})
  }

  /**
   * Opens `root` (a canonical root, trusted as the host's own), then each of `names`
   * below it, one component at a time, never through a link.
   */
  static async open(root: string, names: readonly string[], display: string): Promise<HeldDir> {
    let dir: HeldDir
    if (heldDirectories()) {
      const handle = await open(root, constants.O_RDONLY | O_DIRECTORY).catch((error) => { throw descentError(error, display) })
      dir = new HeldDir(handle, root)
    } else {
      dir = new HeldDir(undefined, root)
    }
    try {
      for (const name of names) {
        const next = await dir.child(name, display)
        await dir.close()
        dir = next
      }
      return dir
    } catch (error) {
      await dir.close()
      throw error
    }
  }
}

function descentError(error: unknown, display: string): FsError {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'ENOTDIR' || code === 'ELOOP') return changedError(display, error)
  if (code === 'ENOENT') return new FsError('NOT_FOUND', `${display} does not exist (it was removed after it was checked)`, { cause: error })
  return new FsError('IO_ERROR', `${display}: ${code ?? (error as Error).message}`, { cause: error })
}
