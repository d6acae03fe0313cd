import { minimatch, type MMRegExp } from 'minimatch'

const cache = new Map<string, RegExp | false>()

/** Compiles name globs once; a toolset's include/exclude lists reuse them. */
export function compileNameGlob(pattern: string): (name: string) => boolean {
  let regexp = cache.get(pattern)
  if (regexp === undefined) {
    regexp = minimatch.makeRe(pattern, { dot: true, nocomment: true, nonegate: true }) as MMRegExp | false
    if (cache.size > 1024) cache.clear()
    cache.set(pattern, regexp)
  }
  if (!regexp) return () => false
  const compiled = regexp
  return (name) => compiled.test(name)
}

/** True when `name` matches any of the patterns. */
export function compileNameGlobs(patterns: readonly string[]): (name: string) => boolean {
  const matchers = patterns.map(compileNameGlob)
  return (name) => matchers.some((match) => match(name))
}
