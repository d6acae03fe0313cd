import Schema from 'schemastery'
import { childPath } from '../path'
import type { ExpectedValue, IssueDetail } from './validation'
import { shown } from './values'

// Issues collect their path on the way back up, innermost segment first, so the success
// path never builds a path. While `quiet` (a union trying a branch) only `n` counts. An issue
// holds its detail; its English message is made once, when the validator returns.
export interface RawIssue { segs: (string | number)[]; detail: IssueDetail }
export interface Run { issues: RawIssue[] | undefined; n: number; quiet: number }
export type Node = (data: any, run: Run) => any

export const MISSING: IssueDetail = Object.freeze({ kind: 'required', params: Object.freeze({ property: false }) })
const MISSING_PROPERTY: IssueDetail = Object.freeze({ kind: 'required', params: Object.freeze({ property: true }) })

export function report(run: Run, detail: IssueDetail): undefined {
  run.n++
  if (!run.quiet) (run.issues ??= []).push({ segs: [], detail })
  return undefined
}

export function reportGot(run: Run, expected: ExpectedValue, data: unknown): undefined {
  run.n++
  if (!run.quiet) (run.issues ??= []).push({ segs: [], detail: { kind: 'type', params: { expected, got: shown(data) } } })
  return undefined
}

export function reportError(run: Run, error: any) {
  run.n++
  if (run.quiet) return
  let message = String(error?.message ?? error)
  let segs: (string | number)[] = []
  if (Schema.ValidationError.is(error) && error.options?.path?.length) {
    // schemastery prefixes its message with the relative path; we keep the path as segments
    const path = error.options.path.filter((s): s is string | number => typeof s !== 'symbol')
    message = message.slice(('$' + path.map((s) => typeof s === 'string' ? '.' + s : `[${s}]`).join('')).length + 1)
    segs = path.reverse()
  }
  // schemastery's own wording, but for the one problem it shares with ours
  const detail: IssueDetail = message === 'missing required value' ? MISSING : { kind: 'other', params: { message } }
  ;(run.issues ??= []).push({ segs, detail })
}

/** Adds `key` to the issues raised since `from`, on the way back up. */
export function annotate(run: Run, from: number, key: string | number) {
  const issues = run.issues!
  for (let i = from; i < issues.length; i++) {
    const issue = issues[i]!
    if (issue.detail === MISSING && !issue.segs.length && typeof key === 'string') issue.detail = MISSING_PROPERTY
    issue.segs.push(key)
  }
}

export function rollback(run: Run, to: number) {
  run.n = to
  if (run.issues && !run.quiet) run.issues.length = to
}

export function formatPath(segs: (string | number)[]): string {
  let path = '$'
  for (let i = segs.length - 1; i >= 0; i--) {
    const seg = segs[i]!
    path = typeof seg === 'number' ? `${path}[${seg}]` : childPath(path, seg)
  }
  return path
}
