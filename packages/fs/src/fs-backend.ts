import { createHash, randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import { type FileHandle, lstat, mkdir, open, readdir, realpath, rename, unlink } from 'node:fs/promises'
import { relative, sep } from 'node:path'
import { type CheckedLocation, type CheckedPath, type EntryKind, locate } from './checked-path'
import { FsError } from './errors'
import { HeldDir, changedError } from './held-dir'

/** @internal The real path was checked; a link swapped in afterwards must not be followed. */
export const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0)
/** A new file: created here or not at all, never through a link. */
const WRITE_NEW_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0)

/** A whole text file as read for edit, overwrite and undo. */
export interface TextFile {
  text: string
  /** SHA-256 of the bytes, hex. */
  digest: string
}

export interface DirectoryEntry {
  name: string
  kind: EntryKind
}

/** SHA-256 of some bytes or of a string's UTF-8 encoding, hex. */
export function sha256(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex')
}

/** @internal The canonical absolute path of a checked path, for the walker and the line reader. */
export function realPathOf(path: CheckedPath): string {
  return locate(path).real
}

/**
 * Reads a whole UTF-8 text file, refusing (before allocating) files over `maxBytes`, and
 * refusing binary data and invalid UTF-8. The BOM, if any, is kept as text.
 */
export async function readTextFile(path: CheckedPath, maxBytes: number): Promise<TextFile> {
  const handle = await openChecked(path)
  try {
    const info = await handle.stat()
    if (!info.isFile()) throw new FsError('NOT_A_FILE', `${path.display} is not a regular file`)
    if (info.size > maxBytes) {
      throw new FsError('TOO_LARGE', `${path.display} is ${formatBytes(info.size)}, over the ${formatBytes(maxBytes)} limit for this operation`)
    }
    const bytes = await handle.readFile()
    if (bytes.length > maxBytes) throw new FsError('TOO_LARGE', `${path.display} grew over the ${formatBytes(maxBytes)} limit while being read`)
    return { text: decodeText(bytes, path.display), digest: sha256(bytes) }
  } finally {
    await handle.close()
  }
}

/** The current SHA-256 of a file, `null` when it does not exist, `undefined` when it is over `maxBytes` or not a file. */
export async function currentDigest(path: CheckedPath, maxBytes: number): Promise<string | null | undefined> {
  let handle: FileHandle
  try {
    handle = await openChecked(path)
  } catch (error) {
    if (FsError.is(error, 'NOT_FOUND')) return null
    throw error
  }
  try {
    const info = await handle.stat()
    if (!info.isFile() || info.size > maxBytes) return undefined
    return sha256(await handle.readFile())
  } finally {
    await handle.close()
  }
}

/** The directory names from the root down to the target's parent, and the target's own name. */
function splitLocation(location: CheckedLocation): { dirs: string[]; name: string; missing: string[] } {
  const { root, real, base, missing } = location
  const names = (missing.length ? base : real) === root ? [] : relative(root, missing.length ? base : real).split(sep)
  if (missing.length) return { dirs: names, name: missing[missing.length - 1], missing: missing.slice(0, -1) }
  return { dirs: names.slice(0, -1), name: names[names.length - 1], missing: [] }
}

/**
 * Replaces or creates the file atomically, keeping the permission bits of a replaced file.
 * Everything happens below a held parent directory (see `HeldDir`): missing parents are
 * created one level at a time and opened without following links, the data goes to a
 * temporary file created with `O_EXCL | O_NOFOLLOW` in that directory, then it is renamed
 * over the target's name in the same directory.
 */
export async function commitFile(path: CheckedPath, text: string): Promise<void> {
  const location = locate(path)
  if (location.access !== 'write') throw new TypeError('commitFile() needs a path checked for write access')
  const { dirs, name, missing } = splitLocation(location)
  if (!name) throw new FsError('NOT_A_FILE', `${path.display} is a directory, not a file`)
  await location.step?.('open', path.target)
  let dir = await HeldDir.open(location.root, dirs, path.display)
  let temp: string | undefined
  let handle: FileHandle | undefined
  try {
    for (const next of missing) {
      await mkdir(dir.at(next)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw ioError(error, path.display)
      })
      const child = await dir.child(next, path.display)
      await dir.close()
      dir = child
    }
    // A replaced file keeps its permission bits; lstat does not follow a link at the name.
    const mode = location.missing.length
      ? undefined
      : await lstat(dir.at(name)).then((info) => info.isFile() ? info.mode & 0o7777 : undefined, () => undefined)
    temp = `.${name}.${randomBytes(6).toString('hex')}.dogu-tmp`
    // O_EXCL | O_NOFOLLOW: nothing already at the temporary name is followed or reused.
    handle = await open(dir.at(temp), WRITE_NEW_FLAGS, mode ?? 0o666)
    await handle.writeFile(text, 'utf8')
    if (mode !== undefined) await handle.chmod(mode)
    await handle.sync()
    await handle.close()
    handle = undefined
    await location.step?.('rename', path.target)
    if (!dir.fd) await expectDirectory(dir.abs, path.display)
    await rename(dir.at(temp), dir.at(name))
    temp = undefined
  } catch (error) {
    await handle?.close().catch(() => {})
    if (temp) await unlink(dir.at(temp)).catch(() => {})
    throw FsError.is(error) ? error : ioError(error, path.display)
  } finally {
    await dir.close()
  }
}

/**
 * Deletes a created file (undo of a creation), in its held parent directory, only while it
 * is still the regular file with SHA-256 `digest`: the entry is opened without following
 * a link, hashed, and deleted only if it is still that same file (device and inode) just
 * before the unlink. `false` when it is not; a file already gone is `true`.
 */
export async function removeFile(path: CheckedPath, digest: string): Promise<boolean> {
  const location = locate(path)
  if (location.access !== 'write') throw new TypeError('removeFile() needs a path checked for write access')
  const { dirs, name } = splitLocation(location)
  if (location.missing.length || !name) return location.missing.length > 0
  await location.step?.('open', path.target)
  const dir = await HeldDir.open(location.root, dirs, path.display)
  try {
    let handle: FileHandle
    try {
      handle = await open(dir.at(name), READ_FLAGS)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true
      if ((error as NodeJS.ErrnoException).code === 'ELOOP') return false
      throw ioError(error, path.display)
    }
    let held
    try {
      held = await handle.stat()
      if (!held.isFile() || sha256(await handle.readFile()) !== digest) return false
    } finally {
      await handle.close()
    }
    await location.step?.('unlink', path.target)
    const now = await lstat(dir.at(name)).catch(() => undefined)
    if (!now || now.ino !== held.ino || now.dev !== held.dev) return false
    await unlink(dir.at(name)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw ioError(error, path.display)
    })
    return true
  } finally {
    await dir.close()
  }
}

/** One directory level, sorted by name (code unit order, like `LC_ALL=C`), read from the held directory. */
export async function readDirectory(path: CheckedPath): Promise<DirectoryEntry[]> {
  const dir = await openDirectory(path)
  try {
    const dirents = await readdir(dir.self(), { withFileTypes: true }).catch((error) => { throw ioError(error, path.display) })
    return dirents
      .map((dirent) => ({ name: dirent.name, kind: kindOf(dirent) }))
      .sort((a, b) => compareNames(a.name, b.name))
  } finally {
    await dir.close()
  }
}

/** @internal A checked directory, held open (see `HeldDir`); the caller closes it. */
export async function openDirectory(path: CheckedPath): Promise<HeldDir> {
  const location = locate(path)
  await location.step?.('open', path.target)
  const names = location.real === location.root ? [] : relative(location.root, location.real).split(sep)
  return HeldDir.open(location.root, names, path.display)
}

/** The entry kind of a dirent or lstat result; links are links, never what they point to. */
export function kindOf(entry: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): EntryKind {
  return entry.isSymbolicLink() ? 'symlink' : entry.isFile() ? 'file' : entry.isDirectory() ? 'directory' : 'other'
}

export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** Decodes strict UTF-8; NUL bytes mean binary. */
export function decodeText(bytes: Uint8Array, display: string): string {
  if (bytes.indexOf(0) !== -1) throw new FsError('BINARY', `${display} is a binary file`)
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)
  } catch {
    throw new FsError('INVALID_UTF8', `${display} is not valid UTF-8 text`)
  }
}

export function formatBytes(size: number): string {
  if (size < 1024) return `${size} B`
  if (size < 1024 * 1024) return `${+(size / 1024).toFixed(1)} KiB`
  return `${+(size / 1024 / 1024).toFixed(1)} MiB`
}

/**
 * @internal Opens a checked file for reading: its parent is held (see `HeldDir`), the name
 * is opened in it with `O_NOFOLLOW` (a link swapped in since the check is not followed) and
 * `O_NONBLOCK` (a FIFO swapped in does not hang the call; it is then not a regular file).
 */
export async function openChecked(path: CheckedPath): Promise<FileHandle> {
  const location = locate(path)
  const { dirs, name } = splitLocation(location)
  if (location.missing.length) throw new FsError('NOT_FOUND', `${path.display} does not exist`)
  await location.step?.('open', path.target)
  if (!name) throw new FsError('NOT_A_FILE', `${path.display} is a directory, not a file`)
  const dir = await HeldDir.open(location.root, dirs, path.display)
  try {
    return await open(dir.at(name), READ_FLAGS | (constants.O_NONBLOCK ?? 0))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw changedError(path.display, error)
    throw ioError(error, path.display)
  } finally {
    await dir.close()
  }
}

/** Without held directories: the directory must still be itself, not a link swapped in after the check. */
async function expectDirectory(dir: string, display: string): Promise<void> {
  const [info, real] = await Promise.all([lstat(dir), realpath(dir)]).catch((error) => { throw ioError(error, display) })
  if (!info.isDirectory() || real !== dir) {
    throw changedError(display)
  }
}

const ERRNO_ERRORS: Record<string, [FsError.Code, (display: string) => string]> = {
  ENOENT: ['NOT_FOUND', (display) => `${display} does not exist`],
  EISDIR: ['NOT_A_FILE', (display) => `${display} is a directory, not a file`],
  ENOTDIR: ['NOT_A_DIRECTORY', (display) => `${display}: a parent of it is not a directory`],
  ELOOP: ['LINK_LOOP', (display) => `${display} runs into a symbolic link cycle`],
  ENAMETOOLONG: ['INVALID_PATH', () => 'a name in the path is longer than the file system allows'],
}

/** @internal The FsError for a failed system call on the path shown as `display`. */
export function ioError(error: unknown, display: string): FsError {
  const { code, syscall, message } = error as NodeJS.ErrnoException
  const known = ERRNO_ERRORS[code ?? '']
  if (known) return new FsError(known[0], known[1](display), { cause: error })
  return new FsError('IO_ERROR', `${display}: ${code ? `${code} ${syscall ?? ''}`.trim() : message}`, { cause: error })
}
