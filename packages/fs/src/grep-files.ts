import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs'
import { READ_FLAGS } from './fs-backend'
import { walk } from './walk'

export interface GrepOptions {
  /** Absolute, canonical path of the directory (or the one file) to search. */
  root: string
  /** Whether `root` is a single file. */
  single?: boolean
  /** `root` held open: the directory (see `walk`'s `rootFd`), or the single file, read by descriptor. */
  rootFd?: number
  /** The pattern; of its flags only `u` is kept (`gm` are added, `i` from `ignoreCase`). */
  regex: RegExp
  /** A literal pattern searched as bytes first, to skip decoding files that cannot match. */
  literal?: string
  ignoreCase?: boolean
  mode: 'content' | 'files' | 'count'
  maxResults: number
  /** Files kept, by path relative to `root`. */
  filter?: (rel: string) => boolean
  /** Whether to enter a directory, by path relative to `root`. */
  descend?: (rel: string) => boolean
  maxFileBytes: number
  maxLineLength: number
  signal?: AbortSignal
  progressEvery?: number
  onProgress?: (scanned: number, results: number) => void
}

export interface GrepLine {
  /** 1-based. */
  line: number
  text: string
  /** The line was longer than `maxLineLength` and `text` is a window around the match. */
  cut?: boolean
}

export interface GrepFile {
  /** Relative to `root` (empty for a single file). */
  path: string
  /** Matching lines (in `count` mode all of them; otherwise as many as were kept). */
  count: number
  lines: GrepLine[]
}

export interface GrepReport {
  files: GrepFile[]
  /** Lines (content), files (files, count) reported. */
  results: number
  /** More results exist than were reported. */
  truncated: boolean
  /** Files searched. */
  scanned: number
  skippedBinary: number
  skippedLarge: number
  unreadable: number
}

type Outcome = GrepFile | 'binary' | 'large' | 'unreadable'

/**
 * Searches files below `root` in walk order, reporting results in that same order. Stops at `maxResults` (and knows whether more exist), skips binary and
 * oversized files and counts them, checks the signal at every entry and file.
 */
export async function grepFiles(options: GrepOptions): Promise<GrepReport> {
  const { signal, mode, maxResults } = options
  const flags = `gm${options.ignoreCase ? 'i' : ''}${options.regex.unicode ? 'u' : ''}`
  const search = new RegExp(options.regex.source, flags)
  const check = new RegExp(options.regex.source, flags.replace('g', ''))
  const needle = options.literal && !options.ignoreCase ? Buffer.from(options.literal) : undefined
  const report: GrepReport = { files: [], results: 0, truncated: false, scanned: 0, skippedBinary: 0, skippedLarge: 0, unreadable: 0 }
  // Each file keeps one line more than could be reported, to tell whether more exist.
  const perFile = mode === 'content' ? maxResults + 1 : mode === 'files' ? 1 : 0

  const scan = (abs: string | number, rel: string): Outcome => {
    let bytes: Buffer
    try {
      const read = readWhole(abs, options.maxFileBytes)
      if (read === 'large') return read
      bytes = read
    } catch {
      return 'unreadable'
    }
    if (bytes.indexOf(0) !== -1) return 'binary'
    if (needle && bytes.indexOf(needle) === -1) return { path: rel, count: 0, lines: [] }
    return { path: rel, ...searchText(bytes.toString('utf8'), search, check, perFile, mode === 'count', options.maxLineLength) }
  }

  // Returns true when the search is over.
  const take = (outcome: Outcome): boolean => {
    signal?.throwIfAborted()
    if (outcome === 'binary') report.skippedBinary++
    else if (outcome === 'large') report.skippedLarge++
    else if (outcome === 'unreadable') report.unreadable++
    else {
      const done = account(outcome)
      if (options.progressEvery && report.scanned % options.progressEvery === 0) options.onProgress?.(report.scanned, report.results)
      return done
    }
    return false
  }

  // Adds one searched file's matches; returns true when the search is over.
  const account = (outcome: GrepFile): boolean => {
    report.scanned++
    if (!outcome.count) return false
    if (report.results >= maxResults) {
      report.truncated = true
      return true
    }
    if (mode === 'content') {
      const room = maxResults - report.results
      if (outcome.lines.length > room) {
        outcome.lines.length = room
        report.truncated = true
      }
      report.results += outcome.lines.length
    } else {
      report.results++
    }
    report.files.push(outcome)
    return report.truncated
  }

  if (options.single) {
    take(scan(options.rootFd ?? options.root, ''))
    return report
  }
  // Files are read synchronously inside the walk's time slices (see SLICE_MS).
  await walk(options.root, (entry) => {
    if (entry.kind !== 'file' || (options.filter && !options.filter(entry.rel))) return
    if (take(scan(entry.at, entry.rel))) return false
  }, { signal, descend: options.descend, onUnreadable: () => report.unreadable++, rootFd: options.rootFd })
  signal?.throwIfAborted()
  return report
}

/** Matching lines of one file's text, each matching on its own (a match may not span lines). */
function searchText(text: string, search: RegExp, check: RegExp, keep: number, countAll: boolean, maxLineLength: number) {
  const lines: GrepLine[] = []
  let count = 0
  let cursor = 0
  let lineNo = 1
  search.lastIndex = 0
  for (let match = search.exec(text); match; match = search.exec(text)) {
    const at = match.index
    // An empty match after the final newline is not on a line.
    if (at === text.length && at > 0 && text.charCodeAt(at - 1) === 10) break
    const start = at === 0 ? 0 : text.lastIndexOf('\n', at - 1) + 1
    let end = text.indexOf('\n', at)
    if (end === -1) end = text.length
    let line = text.slice(start, end)
    if (line.endsWith('\r')) line = line.slice(0, -1)
    search.lastIndex = end + 1
    if (!check.test(line)) {
      if (end >= text.length) break
      continue
    }
    for (let next = text.indexOf('\n', cursor); next !== -1 && next < start; next = text.indexOf('\n', next + 1)) lineNo++
    cursor = start
    count++
    if (lines.length < keep) lines.push(cutLine(lineNo, line, at - start, maxLineLength))
    if ((!countAll && lines.length >= keep) || end >= text.length) break
  }
  return { count, lines }
}

function cutLine(line: number, text: string, column: number, max: number): GrepLine {
  if (text.length <= max) return { line, text }
  const from = Math.max(0, Math.min(column - (max >> 2), text.length - max))
  const head = from > 0 ? '…' : ''
  const tail = from + max < text.length ? '…' : ''
  return { line, text: `${head}${text.slice(from, from + max)}${tail} [line cut: ${text.length} characters]`, cut: true }
}

/** One open, one fstat, one read into a buffer of the file's size, one close; a descriptor is read from the start and left open. */
function readWhole(path: string | number, maxBytes: number): Buffer | 'large' {
  const fd = typeof path === 'number' ? path : openSync(path, READ_FLAGS | (constants.O_NONBLOCK ?? 0))
  try {
    if (!fstatSync(fd).isFile()) throw new Error('not a regular file')
    const size = fstatSync(fd).size
    if (size > maxBytes) return 'large'
    const buffer = Buffer.allocUnsafe(size)
    let offset = 0
    while (offset < size) {
      const bytesRead = readSync(fd, buffer, offset, size - offset, offset)
      if (bytesRead === 0) return buffer.subarray(0, offset)
      offset += bytesRead
    }
    return buffer
  } finally {
    if (typeof path !== 'number') closeSync(fd)
  }
}
