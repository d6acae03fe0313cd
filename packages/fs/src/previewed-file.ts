import type { ToolCall } from '@dogu/core'
import type { CheckedPath } from './checked-path'
import { FsError } from './errors'
import type { TextFile } from './fs-backend'

/**
 * What a call's preview saw of its file (`write`, `edit`), so that its run writes only over
 * the file the person was shown: the pipeline hands the same call object to `preview` and
 * to `run`, and the record is kept per call, never shared between calls.
 */
export interface PreviewedFile {
  /** The path argument the preview was for. */
  input: string
  /** The checked target (workspace-relative), when the preview got past the path checks. */
  target?: string
  /**
   * The file's SHA-256 as the preview read it; `null`: there was no file; `unreadable`: not
   * a replaceable text file; `refused`: the path checks refused it, so nothing was read.
   */
  state: string | null
}

const previews = new WeakMap<object, PreviewedFile>()

/** @internal Called by the preview: the latest preview of a call is what the person saw last. */
export function rememberPreview(call: ToolCall, previewed: PreviewedFile): void {
  previews.set(call, previewed)
}

/**
 * @internal Called by `run` under the file's lock, with the file as it reads it now: when
 * this call was previewed for this file (the same target, or for a preview the path checks
 * refused, the same path argument), the file must be as the preview read it, or the run is
 * `STALE` and writes nothing. A call without a preview (a rule allowed it) is not held; an
 * approver's edit to another path is not held to the first path's preview.
 */
export function expectPreviewed(call: ToolCall, input: string, file: CheckedPath, prior: TextFile | null): void {
  const previewed = previews.get(call)
  if (!previewed) return
  const same = previewed.target !== undefined ? previewed.target === file.target : previewed.input === input
  if (!same || previewed.state === (prior?.digest ?? null)) return
  throw new FsError('STALE', `${file.display} changed on disk after the change was shown for approval (${difference(previewed.state, prior)}); nothing was written. Read it again and redo the change, so that what is approved is what is written.`)
}

function difference(state: string | null, prior: TextFile | null): string {
  if (state === 'refused') return 'the preview said the call would be refused; now it would not be'
  if (state === null) return 'the preview showed it being created; it exists now'
  if (prior === null) return 'it no longer exists'
  return 'it no longer has the content the preview showed'
}
