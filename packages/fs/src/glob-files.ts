import type { Minimatch } from 'minimatch'
import type { EntryKind } from './checked-path'
import { descender } from './glob-pattern'
import { walk } from './walk'

export interface GlobOptions {
  /** Absolute, canonical directory to search. */
  root: string
  /** `root` held open (see `walk`'s `rootFd`). */
  rootFd?: number
  matcher: Minimatch
  maxResults: number
  /** Directory names not entered (the root itself is never subject). */
  ignore?: ReadonlySet<string>
  signal?: AbortSignal
}

export interface GlobMatch {
  /** Relative to `root`, with `/`. */
  path: string
  kind: EntryKind
}

export interface GlobReport {
  matches: GlobMatch[]
  /** More entries match than were returned. */
  truncated: boolean
  /** Entries looked at, to show the walk stopped early. */
  visited: number
}

/**
 * A cheap test on an entry's name that rules out most entries before the full match: the last
 * segment of every alternative of the pattern must match the name. `undefined` when some
 * alternative ends in `**` or `/` (anything may match), for negated patterns and `nocase`.
 */
function nameFilter(matcher: Minimatch): ((name: string) => boolean) | undefined {
  if (matcher.negate || matcher.comment || matcher.options.nocase || matcher.options.matchBase) return
  const lasts: (string | RegExp)[] = []
  for (const parts of matcher.set) {
    const last = parts[parts.length - 1]
    if (typeof last === 'string' ? last === '' : !(last instanceof RegExp)) return
    lasts.push(last as string | RegExp)
  }
  return (name) => lasts.some((last) => typeof last === 'string' ? last === name : last.test(name))
}

/**
 * Walks below `root` and keeps entries whose relative path the matcher accepts, in walk
 * order (sorted by path segments). Directories that cannot hold a match are not entered;
 * the walk ends as soon as one match more than `maxResults` is found.
 */
export async function globFiles(options: GlobOptions): Promise<GlobReport> {
  const { matcher, maxResults, ignore } = options
  const matches: GlobMatch[] = []
  let visited = 0
  let truncated = false
  const possible = nameFilter(matcher)
  await walk(options.root, (entry) => {
    visited++
    if (possible && !possible(entry.rel.slice(entry.rel.lastIndexOf('/') + 1))) return
    // A pattern ending in "/" only matches directories, which minimatch sees with the slash.
    const hit = matcher.match(entry.rel) || (entry.kind === 'directory' && matcher.match(`${entry.rel}/`))
    if (!hit) return
    if (matches.length === maxResults) {
      truncated = true
      return false
    }
    matches.push({ path: entry.rel, kind: entry.kind })
  }, { signal: options.signal, descend: descender(ignore, matcher), rootFd: options.rootFd })
  return { matches, truncated, visited }
}
