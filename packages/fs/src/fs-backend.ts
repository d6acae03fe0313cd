import { createHash, randomBytes } from 'node:crypto'
import { type BigIntStats, constants } from 'node:fs'
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
 * Which file an entry is: its device, inode and status-change time (`ctime`, ns), as decimal
 * strings. Two entries with the same identity are one file; the same content is not enough.
 * The ctime tells a new file that got a deleted one's inode number from it (ext4 hands freed
 * numbers out again at once); it also changes on chmod, a hard link, a rename.
 */
export interface FileIdentity {
  dev: string
  ino: string
  /** Absent in artifacts recorded before it was; then only device and inode are compared. */
  ctime?: string
}

/** What `commitFile` wrote: the new file's identity, and that of the file it replaced, if any. */
export interface Committed {
  written: FileIdentity
  replaced?: FileIdentity
}

/** The file a change wrote, as undo expects to find it: its SHA-256 and, when recorded, its identity. */
export interface WrittenFile {
  digest: string
  identity?: FileIdentity
}

/**
 * Why the entry at a path is not the file a change wrote: nothing there (`missing`), a
 * symbolic link (`link`), not a regular file (`not_file`), other content (`content`, also
 * over `maxBytes`), or the same content in another file (`replaced`).
 */
export type Mismatch = 'missing' | 'link' | 'not_file' | 'content' | 'replaced'

function identityOf(info: BigIntStats): FileIdentity {
  return { dev: String(info.dev), ino: String(info.ino), ctime: String(info.ctimeNs) }
}

function sameFile(info: BigIntStats, identity: FileIdentity): boolean {
  return String(info.dev) === identity.dev && String(info.ino) === identity.ino
    && (identity.ctime === undefined || String(info.ctimeNs) === identity.ctime)
}

/**
 * The identity of the file just renamed to `name` from a temporary file of identity `temp`:
 * read after the rename, which changes the ctime on most file systems. When the name no
 * longer holds that file (swapped at once), the temporary file's: undo will then refuse.
 */
async function renamedIdentity(dir: HeldDir, name: string, temp: FileIdentity): Promise<FileIdentity> {
  const now = await lstat(dir.at(name), { bigint: true }).catch(() => undefined)
  return now?.isFile() && String(now.dev) === temp.dev && String(now.ino) === temp.ino ? identityOf(now) : temp
}

/**
 * Replaces or creates the file atomically, keeping the permission bits of a replaced file.
 * Everything happens below a held parent directory (see `HeldDir`): missing parents are
 * created one level at a time and opened without following links, the data goes to a
 * temporary file created with `O_EXCL | O_NOFOLLOW` in that directory, then it is renamed
 * over the target's name in the same directory. Returns the identity of the file written
 * (the rename keeps it), which undo later requires to find at the path.
 */
export async function commitFile(path: CheckedPath, text: string): Promise<Committed> {
  const location = locate(path)
  if (location.access !== 'write') throw new TypeError('commitFile() needs a path checked for write access')
  const { dirs, name, missing } = splitLocation(location)
  if (!name) throw new FsError('NOT_A_FILE', `${path.display} is a directory, not a file`)
  await location.step?.('open', path.target)
  let dir = await HeldDir.open(location.root, dirs, path.display)
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
    const replaced = location.missing.length
      ? undefined
      : await lstat(dir.at(name), { bigint: true }).then((info) => info.isFile() ? info : undefined, () => undefined)
    const temp = await writeTemporary(dir, name, text, replaced ? Number(replaced.mode) & 0o7777 : undefined, path.display)
    try {
      await location.step?.('rename', path.target)
      if (!dir.fd) await expectDirectory(dir.abs, path.display)
      await rename(dir.at(temp.name), dir.at(name))
    } catch (error) {
      await unlink(dir.at(temp.name)).catch(() => {})
      throw FsError.is(error) ? error : ioError(error, path.display)
    }
    const written = await renamedIdentity(dir, name, temp.identity)
    return replaced ? { written, replaced: identityOf(replaced) } : { written }
  } finally {
    await dir.close()
  }
}

/**
 * Writes `text` to a new temporary file beside `name` in the held `dir`, created with
 * `O_EXCL | O_NOFOLLOW` (nothing already at that name is followed or reused) and synced.
 */
async function writeTemporary(dir: HeldDir, name: string, text: string, mode: number | undefined, display: string): Promise<{ name: string; identity: FileIdentity }> {
  const temp = `.${name}.${randomBytes(6).toString('hex')}.dogu-tmp`
  let handle: FileHandle | undefined
  try {
    handle = await open(dir.at(temp), WRITE_NEW_FLAGS, mode ?? 0o666)
    await handle.writeFile(text, 'utf8')
    if (mode !== undefined) await handle.chmod(mode)
    await handle.sync()
    const identity = identityOf(await handle.stat({ bigint: true }))
    await handle.close()
    return { name: temp, identity }
  } catch (error) {
    await handle?.close().catch(() => {})
    if (handle) await unlink(dir.at(temp)).catch(() => {})
    throw FsError.is(error) ? error : ioError(error, display)
  }
}

/**
 * Checks that `name` in the held `dir` is the file a change wrote: opened without following
 * a link, a regular file, with the expected content, and (when recorded) the same file, by
 * device, inode and ctime. Returns what it found, for a check right before the act.
 */
async function expectWritten(dir: HeldDir, name: string, expected: WrittenFile, maxBytes: number, display: string): Promise<BigIntStats | Mismatch> {
  let handle: FileHandle
  try {
    handle = await open(dir.at(name), READ_FLAGS | (constants.O_NONBLOCK ?? 0))
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return 'missing'
    if (code === 'ELOOP') return 'link'
    throw ioError(error, display)
  }
  try {
    const info = await handle.stat({ bigint: true })
    if (!info.isFile()) return 'not_file'
    if (info.size > BigInt(maxBytes) || sha256(await handle.readFile()) !== expected.digest) return 'content'
    if (expected.identity && !sameFile(info, expected.identity)) return 'replaced'
    return info
  } finally {
    await handle.close()
  }
}

/** Right before the act: the name must still be the very entry `expectWritten` checked. */
async function stillTheSame(dir: HeldDir, name: string, held: BigIntStats): Promise<Mismatch | undefined> {
  const now = await lstat(dir.at(name), { bigint: true }).catch(() => undefined)
  if (!now) return 'missing'
  if (now.isSymbolicLink()) return 'link'
  return now.ino === held.ino && now.dev === held.dev && now.ctimeNs === held.ctimeNs ? undefined : 'replaced'
}

/**
 * Deletes a created file (undo of a creation), by its name in its held parent directory,
 * only while that name is still the file the change wrote (see `expectWritten`), checked
 * again by device, inode and ctime just before the unlink. A link there is never followed: at
 * worst, in the instant between that check and the unlink, a name swapped in is what goes,
 * never a file a link leads to. `true` when deleted, else why not.
 */
export async function removeFile(path: CheckedPath, expected: WrittenFile, maxBytes: number): Promise<true | Mismatch> {
  return atWrittenFile(path, expected, maxBytes, 'removeFile', async (dir, name, held, location) => {
    await location.step?.('unlink', path.target)
    if (!dir.fd) await expectDirectory(dir.abs, path.display)
    const changed = await stillTheSame(dir, name, held)
    if (changed) return changed
    await unlink(dir.at(name)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw ioError(error, path.display)
    })
    return true as const
  })
}

/**
 * Puts `text` back at a changed file's name (undo of a change), only while that name is
 * still the file the change wrote (see `expectWritten`): the prior content goes to a new
 * temporary file in the held parent directory, the name is checked again by device,
 * inode and ctime, and the temporary file is renamed over it. Nothing is written through a link at
 * the name or at a parent, nor into the changed file itself (a hard link to it elsewhere
 * keeps the changed content). The new file's identity, or why nothing was written.
 */
export async function restoreFile(path: CheckedPath, text: string, expected: WrittenFile, maxBytes: number): Promise<FileIdentity | Mismatch> {
  return atWrittenFile(path, expected, maxBytes, 'restoreFile', async (dir, name, held, location) => {
    const temp = await writeTemporary(dir, name, text, Number(held.mode) & 0o7777, path.display)
    try {
      await location.step?.('rename', path.target)
      if (!dir.fd) await expectDirectory(dir.abs, path.display)
      const changed = await stillTheSame(dir, name, held)
      if (changed) {
        await unlink(dir.at(temp.name)).catch(() => {})
        return changed
      }
      await rename(dir.at(temp.name), dir.at(name))
    } catch (error) {
      await unlink(dir.at(temp.name)).catch(() => {})
      throw FsError.is(error) ? error : ioError(error, path.display)
    }
    return await renamedIdentity(dir, name, temp.identity)
  })
}

/**
 * What undo's two acts share: the name in its held parent directory, checked to be the very
 * file the change wrote (`expectWritten`), then `act` on it; the directory is closed after.
 */
async function atWrittenFile<T>(
  path: CheckedPath,
  expected: WrittenFile,
  maxBytes: number,
  caller: string,
  act: (dir: HeldDir, name: string, held: BigIntStats, location: ReturnType<typeof locate>) => Promise<T | Mismatch>,
): Promise<T | Mismatch> {
  const location = locate(path)
  if (location.access !== 'write') throw new TypeError(`${caller}() needs a path checked for write access`)
  const { dirs, name } = splitLocation(location)
  if (!name) return 'not_file'
  if (location.missing.length) return 'missing'
  await location.step?.('open', path.target)
  const dir = await HeldDir.open(location.root, dirs, path.display)
  try {
    const held = await expectWritten(dir, name, expected, maxBytes, path.display)
    if (typeof held === 'string') return held
    return await act(dir, name, held, location)
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
