import type { CheckedPath } from './checked-path'
import { FsError } from './errors'
import { openChecked } from './fs-backend'

export interface ReadLinesOptions {
  /** Zero-based line to start at. */
  offset: number
  /** Most lines to return. @default Infinity */
  limit?: number
  /** Most bytes of text to return. */
  maxBytes: number
}

export interface LinesRead {
  text: string
  /** Zero-based index of the first line returned. */
  offset: number
  /** Lines returned (a cut line counts). */
  count: number
  /** Lines in the file, when the read reached its end. */
  total?: number
  /** Size of the file in bytes. */
  size: number
  /** Why the read stopped before the end: `limit` lines, or the byte cap. */
  stoppedBy?: 'limit' | 'bytes'
  /** The last line returned was cut at the byte cap. */
  cut?: boolean
}

/**
 * Streams a UTF-8 text file line by line, so a large file is never held whole: lines before
 * `offset` are skipped, reading stops at `limit` lines or `maxBytes` of text. NUL bytes are
 * reported as binary, bad UTF-8 as such.
 */
export async function readLines(path: CheckedPath, options: ReadLinesOptions): Promise<LinesRead> {
  const { offset, maxBytes } = options
  const limit = options.limit ?? Infinity
  const handle = await openChecked(path)
  try {
    const info = await handle.stat()
    if (!info.isFile()) throw new FsError('NOT_A_FILE', `${path.display} is not a regular file`)
    const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
    const buffer = Buffer.allocUnsafe(Math.max(1, Math.min(info.size + 1, 1 << 16)))
    const out: string[] = []
    let bytes = 0
    let line = 0
    let partial = ''
    let result: Pick<LinesRead, 'stoppedBy' | 'cut'> | undefined

    // Takes one complete line; returns false when reading should stop.
    const take = (text: string, complete: boolean): boolean => {
      if (line < offset) return true
      if (out.length >= limit) {
        result = { stoppedBy: 'limit' }
        return false
      }
      const piece = complete ? text + '\n' : text
      const size = Buffer.byteLength(piece)
      if (bytes + size > maxBytes) {
        if (!out.length) {
          out.push(cutToBytes(piece, maxBytes))
          result = { stoppedBy: 'bytes', cut: true }
        } else {
          result = { stoppedBy: 'bytes' }
        }
        return false
      }
      out.push(piece)
      bytes += size
      return true
    }

    read: for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null)
      const chunk = buffer.subarray(0, bytesRead)
      if (chunk.indexOf(0) !== -1) throw new FsError('BINARY', `${path.display} is a binary file`)
      let text: string
      try {
        text = decoder.decode(chunk, { stream: bytesRead > 0 })
      } catch {
        throw new FsError('INVALID_UTF8', `${path.display} is not valid UTF-8 text`)
      }
      let start = 0
      for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
        const lineText = partial + text.slice(start, end)
        partial = ''
        start = end + 1
        if (!take(lineText, true)) break read
        line++
      }
      // Skipped lines need no text; a line being collected past the cap is cut anyway.
      if (line < offset) partial = ''
      else partial += text.slice(start)
      if (partial && out.length >= limit) {
        result = { stoppedBy: 'limit' }
        break
      }
      if (partial.length > maxBytes) {
        take(partial, false)
        break
      }
      if (bytesRead === 0) {
        if (partial && take(partial, false)) line++
        else if (partial) break
        return { text: out.join(''), offset, count: out.length, total: line, size: info.size }
      }
    }
    return { text: out.join(''), offset, count: out.length, size: info.size, ...result }
  } finally {
    await handle.close()
  }
}

/** The longest prefix of `text` within `maxBytes` of UTF-8, not splitting a character. */
function cutToBytes(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text.slice(0, maxBytes))
  if (bytes.length <= maxBytes) return text.slice(0, maxBytes)
  return new TextDecoder().decode(bytes.subarray(0, maxBytes)).replace(/\uFFFD$/, '')
}
