import { type Dirent, closeSync, openSync, readdirSync } from 'node:fs'
import { sep } from 'node:path'
import type { EntryKind } from './checked-path'
import { compareNames, kindOf } from './fs-backend'
import { DIR_FLAGS } from './held-dir'

export interface WalkEntry {
  /** Relative to the walk's root, with `/`. */
  rel: string
  /** Absolute. */
  abs: string
  /**
   * What to open the entry by, valid only while the visitor runs: a name in the held parent
   * directory (`/proc/self/fd/N/name`) when the walk holds its directories, else `abs`.
   */
  at: string
  kind: EntryKind
}

export interface WalkOptions {
  signal?: AbortSignal
  /** Whether to go into a directory (by its relative path). Not called for the root. @default always */
  descend?: (rel: string) => boolean
  /** Called for each directory that could not be read (permissions, removed meanwhile, replaced by a link). */
  onUnreadable?: (rel: string, error: NodeJS.ErrnoException) => void
  /**
   * The root, held open (see `HeldDir`); the walk then opens every directory by name in its
   * held parent, never through a link, and reads it by descriptor. Not closed by the walk.
   */
  rootFd?: number
}

/** What the visitor answers: `false` ends the walk; a promise is awaited before going on. */
export type WalkVisit = boolean | void | Promise<boolean | void>

interface Frame {
  rel: string
  /** The directory's absolute path, ending with the separator. */
  prefix: string
  entries: Dirent[]
  index: number
  /** The directory held open, when the walk holds them; `at` names entries through it. */
  fd?: number
  at: string
}

/**
 * Longest stretch of synchronous work before yielding to the event loop. Directories (and, in
 * grep, files) are read with synchronous calls in such slices: on a busy machine the thread
 * pool's round trip per call costs several times the system call itself.
 */
export const SLICE_MS = 8

/**
 * Depth-first walk over every entry below `root` in a stable order (names sorted by code unit
 * in each directory; a directory's contents come right after it). Symbolic links are
 * reported, never followed, so the walk stays inside the root and cannot loop. The signal is
 * checked at every entry, the event loop gets a turn every few milliseconds, and the visitor
 * can end the walk. Resolves with whether it was ended.
 */
export async function walk(root: string, visit: (entry: WalkEntry) => WalkVisit, options: WalkOptions = {}): Promise<boolean> {
  const { signal, descend, onUnreadable, rootFd } = options
  const open = (rel: string, abs: string, parent?: Frame, name?: string): Frame | undefined => {
    let fd: number | undefined
    try {
      if (rootFd !== undefined) fd = parent ? openSync(parent.at + name, DIR_FLAGS) : rootFd
      const entries = readdirSync(fd === undefined ? abs : `/proc/self/fd/${fd}`, { withFileTypes: true }).sort((a, b) => compareNames(a.name, b.name))
      const prefix = abs.endsWith(sep) ? abs : abs + sep
      return { rel, prefix, entries, index: 0, fd, at: fd === undefined ? prefix : `/proc/self/fd/${fd}/` }
    } catch (error) {
      if (fd !== undefined && fd !== rootFd) closeSync(fd)
      onUnreadable?.(rel, error as NodeJS.ErrnoException)
    }
  }
  const close = (frame: Frame) => {
    if (frame.fd !== undefined && frame.fd !== rootFd) closeSync(frame.fd)
  }

  signal?.throwIfAborted()
  const first = open('', root)
  const stack: Frame[] = first ? [first] : []
  try {
    return await walkFrames(stack, visit, open, close, signal, descend)
  } finally {
    for (const frame of stack) close(frame)
  }
}

async function walkFrames(
  stack: Frame[],
  visit: (entry: WalkEntry) => WalkVisit,
  open: (rel: string, abs: string, parent?: Frame, name?: string) => Frame | undefined,
  close: (frame: Frame) => void,
  signal: AbortSignal | undefined,
  descend: ((rel: string) => boolean) | undefined,
): Promise<boolean> {
  let sliceStart = performance.now()
  while (stack.length) {
    if (performance.now() - sliceStart > SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve))
      sliceStart = performance.now()
    }
    signal?.throwIfAborted()
    const frame = stack[stack.length - 1]
    if (frame.index >= frame.entries.length) {
      close(stack.pop()!)
      continue
    }
    const dirent = frame.entries[frame.index++]
    const rel = frame.rel ? `${frame.rel}/${dirent.name}` : dirent.name
    const abs = frame.prefix + dirent.name
    const kind = kindOf(dirent)
    let answer = visit({ rel, abs, at: frame.at + dirent.name, kind })
    if (answer instanceof Promise) answer = await answer
    if (answer === false) return true
    if (kind === 'directory' && (!descend || descend(rel))) {
      const child = open(rel, abs, frame, dirent.name)
      if (child) stack.push(child)
    }
  }
  return false
}
