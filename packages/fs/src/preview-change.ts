import type { ToolCall, ToolPreview } from '@dogu/core'
import { structuredPatch } from 'diff'
import type { CheckedPath } from './checked-path'
import { FsError } from './errors'
import { type TextFile, readTextFile } from './fs-backend'
import type { FsContext } from './fs-context'
import { rememberPreview } from './previewed-file'

/** The most hunks a write/edit preview shows; the rest are folded into one line. */
export const PREVIEW_HUNKS = 40
/** The most diff lines (hunk headers included) a write/edit preview shows. */
export const PREVIEW_DIFF_LINES = 400
/** How long computing the diff may take before the preview gives counts only. */
const DIFF_TIMEOUT = 2_000

/**
 * What `write` and `edit` would do, for the person asked: the path checked exactly as the
 * tool checks it (so a path the tool refuses is never read), the file read but never
 * written, and `next(prior)` the content the call would leave. A step the tool would fail
 * at gives a line saying the call will be refused, and why, instead of a diff. What was read
 * is remembered for the call, so its run is `STALE` if the file changed since.
 */
export async function previewChange(
  context: FsContext,
  call: ToolCall,
  input: string,
  check: () => Promise<CheckedPath>,
  next: (prior: TextFile | null, file: CheckedPath) => string,
): Promise<ToolPreview> {
  const tool = call.name
  let file: CheckedPath | undefined
  try {
    try {
      file = await check()
    } catch (error) {
      if (FsError.is(error)) rememberPreview(call, { input, state: 'refused' })
      throw error
    }
    let prior: TextFile | null
    try {
      prior = await readTextFile(file, context.limits.writeBytes)
    } catch (error) {
      if (!FsError.is(error, 'NOT_FOUND')) {
        if (FsError.is(error)) rememberPreview(call, { input, target: file.target, state: 'unreadable' })
        throw error
      }
      prior = null
    }
    // The run writes only over the file as read here (see `expectPreviewed`).
    rememberPreview(call, { input, target: file.target, state: prior?.digest ?? null })
    const text = next(prior, file)
    if (Buffer.byteLength(text) > context.limits.writeBytes) {
      throw new FsError('TOO_LARGE', `the new content of ${file.display} would be ${Buffer.byteLength(text)} bytes, over the ${context.limits.writeBytes} byte limit`)
    }
    return fileDiff(file.display, prior?.text ?? null, text)
  } catch (error) {
    if (!(error instanceof FsError)) throw error
    const { code, message } = error
    const unreplaceable = code === 'BINARY' || code === 'INVALID_UTF8' || code === 'TOO_LARGE'
    const why = unreplaceable ? `${message}; ${tool} only replaces UTF-8 text files within its limit` : message.replace(/\.$/, '')
    return { text: `${tool} will be refused (${code}): ${why}. Nothing would be written.` }
  }
}

/**
 * The unified diff from `prior` (`null`: no file yet) to `next`, three lines of context,
 * bounded to `PREVIEW_HUNKS` hunks and `PREVIEW_DIFF_LINES` lines; what is left out is
 * counted on a last line (`… 3 more hunks (120 lines) folded`). `text` says what happens.
 */
export function fileDiff(display: string, prior: string | null, next: string): ToolPreview {
  if (prior === next) return { text: `No change: ${display} already has this content; nothing would be written.` }
  const patch = structuredPatch(display, display, prior ?? '', next, undefined, undefined, { context: 3, timeout: DIFF_TIMEOUT })
  const newLines = countLines(next)
  if (!patch) {
    return { text: prior === null ? `Creates ${display} (${newLines} line${plural(newLines)}); the diff is too large to show.` : `Replaces ${display} (${countLines(prior)} lines now, ${newLines} after); the diff is too large to show.` }
  }
  let added = 0
  let removed = 0
  for (const hunk of patch.hunks) {
    for (const line of hunk.lines) {
      if (line[0] === '+') added++
      else if (line[0] === '-') removed++
    }
  }
  const out = [prior === null ? '--- /dev/null' : `--- a/${display}`, `+++ b/${display}`]
  let budget = PREVIEW_DIFF_LINES
  let shown = 0
  for (const hunk of patch.hunks) {
    const size = hunk.lines.length + 1
    if (shown === PREVIEW_HUNKS || (size > budget && shown > 0)) break
    out.push(`@@ -${range(hunk.oldStart, hunk.oldLines)} +${range(hunk.newStart, hunk.newLines)} @@`)
    shown++
    if (size > budget) {
      // A first hunk longer than the whole budget (a new file, a rewrite): its head.
      out.push(...hunk.lines.slice(0, budget - 1))
      const left = hunk.lines.length - (budget - 1)
      out.push(`… ${left} more line${plural(left)} of this hunk folded`)
      budget = 0
      break
    }
    out.push(...hunk.lines)
    budget -= size
  }
  const rest = patch.hunks.slice(shown)
  if (rest.length) {
    const lines = rest.reduce((sum, hunk) => sum + hunk.lines.length + 1, 0)
    out.push(`… ${rest.length} more hunk${plural(rest.length)} (${lines} line${plural(lines)}) folded`)
  }
  const text = prior === null
    ? `Creates ${display} (${newLines} line${plural(newLines)}).`
    : `Changes ${display}: +${added} -${removed} line${plural(added + removed)} in ${patch.hunks.length} hunk${plural(patch.hunks.length)}.`
  return { text, diff: out.join('\n') }
}

/** `12,3`, or `12` for one line, as unified diffs write a range; an empty range starts before its line. */
function range(start: number, lines: number): string {
  if (lines === 1) return String(start)
  return `${lines === 0 ? Math.max(0, start - 1) : start},${lines}`
}

function countLines(text: string): number {
  return text ? text.split('\n').length - (text.endsWith('\n') ? 1 : 0) : 0
}

const plural = (count: number) => count === 1 ? '' : 's'
