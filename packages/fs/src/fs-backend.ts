import { createHash, randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import { type FileHandle, lstat, mkdir, open, readdir, realpath, rename, unlink } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { type CheckedPath, type EntryKind, locate } from './checked-path'
import { FsError } from './errors'

/** @internal The real path was checked; a link swapped in afterwards must not be followed. */
export const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0)

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
  const { real } = locate(path)
  const handle = await openFile(real, path.display)
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
  const { real } = locate(path)
  let handle: FileHandle
  try {
    handle = await open(real, READ_FLAGS)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw ioError(error, path.display)
  }
  try {
    const info = await handle.stat()
    if (!info.isFile() || info.size > maxBytes) return undefined
    return sha256(await handle.readFile())
  } finally {
    await handle.close()
  }
}

/**
 * Replaces or creates the file atomically, keeping the permission bits of a replaced file: missing parents are created one level at a time
 * (each checked to be the real directory it should be), the data goes to a temporary file
 * in the checked parent, the parent is checked again, then the temporary file is renamed
 * over the target.
 */
export async function commitFile(path: CheckedPath, text: string): Promise<void> {
  const { real, base, missing, access } = locate(path)
  if (access !== 'write') throw new TypeError('commitFile() needs a path checked for write access')
  // A replaced file keeps its permission bits.
  const mode = missing.length ? undefined : await lstat(real).then((info) => info.mode & 0o7777, () => undefined)
  let parent = base
  for (const name of missing.slice(0, -1)) {
    const next = join(parent, name)
    await mkdir(next).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw ioError(error, path.display)
    })
    await expectDirectory(next, path.display)
    parent = next
  }
  if (!missing.length) parent = dirname(real)
  const temp = join(parent, `.${basename(real)}.${randomBytes(6).toString('hex')}.dogu-tmp`)
  let handle: FileHandle | undefined
  try {
    // `wx` refuses to follow anything already at the temporary name.
    handle = await open(temp, 'wx', mode ?? 0o666)
    await handle.writeFile(text, 'utf8')
    if (mode !== undefined) await handle.chmod(mode)
    await handle.sync()
    await handle.close()
    handle = undefined
    await expectDirectory(parent, path.display)
    await rename(temp, real)
  } catch (error) {
    await handle?.close().catch(() => {})
    await unlink(temp).catch(() => {})
    throw FsError.is(error) ? error : ioError(error, path.display)
  }
}

/** Deletes a file (undo of a creation). A file that is already gone is not an error. */
export async function removeFile(path: CheckedPath): Promise<void> {
  const { real, access } = locate(path)
  if (access !== 'write') throw new TypeError('removeFile() needs a path checked for write access')
  await unlink(real).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw ioError(error, path.display)
  })
}

/** One directory level, sorted by name (code unit order, like `LC_ALL=C`). */
export async function readDirectory(path: CheckedPath): Promise<DirectoryEntry[]> {
  const { real } = locate(path)
  const dirents = await readdir(real, { withFileTypes: true }).catch((error) => { throw ioError(error, path.display) })
  return dirents
    .map((dirent) => ({ name: dirent.name, kind: kindOf(dirent) }))
    .sort((a, b) => compareNames(a.name, b.name))
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

/** @internal Opens a checked file for reading, without following a link swapped in since the check. */
export async function openChecked(path: CheckedPath): Promise<FileHandle> {
  return openFile(locate(path).real, path.display)
}

async function openFile(real: string, display: string): Promise<FileHandle> {
  try {
    return await open(real, READ_FLAGS)
  } catch (error) {
    throw ioError(error, display)
  }
}

/** The directory must still be itself, not a link swapped in after the check. */
async function expectDirectory(dir: string, display: string): Promise<void> {
  const [info, real] = await Promise.all([lstat(dir), realpath(dir)]).catch((error) => { throw ioError(error, display) })
  if (!info.isDirectory() || real !== dir) {
    throw new FsError('OUTSIDE_ROOT', `${display}: the parent directory changed while writing (it is no longer the checked directory)`)
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
