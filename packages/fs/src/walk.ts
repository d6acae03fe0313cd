import { type Dirent, readdirSync } from 'node:fs'
import { sep } from 'node:path'
import type { EntryKind } from './checked-path'
import { compareNames, kindOf } from './fs-backend'

export interface WalkEntry {
  /** Relative to the walk's root, with `/`. */
  rel: string
  /** Absolute. */
  abs: string
  kind: EntryKind
}

export interface WalkOptions {
  signal?: AbortSignal
  /** Whether to go into a directory (by its relative path). Not called for the root. @default always */
  descend?: (rel: string) => boolean
  /** Called for each directory that could not be read (permissions, removed meanwhile). */
  onUnreadable?: (rel: string, error: NodeJS.ErrnoException) => void
}

/** What the visitor answers: `false` ends the walk; a promise is awaited before going on. */
export type WalkVisit = boolean | void | Promise<boolean | void>

interface Frame {
  rel: string
  /** The directory's absolute path, ending with the separator. */
  prefix: string
  entries: Dirent[]
  index: number
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
  const { signal, descend, onUnreadable } = options
  const open = (rel: string, abs: string): Frame | undefined => {
    try {
      const entries = readdirSync(abs, { withFileTypes: true }).sort((a, b) => compareNames(a.name, b.name))
      return { rel, prefix: abs.endsWith(sep) ? abs : abs + sep, entries, index: 0 }
    } catch (error) {
      onUnreadable?.(rel, error as NodeJS.ErrnoException)
    }
  }

  signal?.throwIfAborted()
  const first = open('', root)
  const stack: Frame[] = first ? [first] : []
  let sliceStart = performance.now()
  while (stack.length) {
    if (performance.now() - sliceStart > SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve))
      sliceStart = performance.now()
    }
    signal?.throwIfAborted()
    const frame = stack[stack.length - 1]
    if (frame.index >= frame.entries.length) {
      stack.pop()
      continue
    }
    const dirent = frame.entries[frame.index++]
    const rel = frame.rel ? `${frame.rel}/${dirent.name}` : dirent.name
    const abs = frame.prefix + dirent.name
    const kind = kindOf(dirent)
    let answer = visit({ rel, abs, kind })
    if (answer instanceof Promise) answer = await answer
    if (answer === false) return true
    if (kind === 'directory' && (!descend || descend(rel))) {
      const child = open(rel, abs)
      if (child) stack.push(child)
    }
  }
  return false
}
