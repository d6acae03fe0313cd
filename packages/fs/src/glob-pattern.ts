import { Minimatch, type MinimatchOptions } from 'minimatch'
import { FsError } from './errors'

/**
 * Compiles a glob written by the model. Patterns are relative to the searched directory, so
 * an absolute pattern or a `..` segment (which could only leave it) is refused with advice.
 */
export function compileGlob(pattern: string, options: MinimatchOptions, what = 'pattern'): Minimatch {
  if (!pattern) throw new FsError('INVALID_ARGUMENT', `${what} is empty`)
  if (pattern.includes('\0')) throw new FsError('INVALID_ARGUMENT', `${what} contains a null byte`)
  if (pattern.length > 1000) throw new FsError('INVALID_ARGUMENT', `${what} is longer than 1000 characters`)
  if (pattern.startsWith('/')) {
    throw new FsError('INVALID_ARGUMENT', `${what} ${JSON.stringify(pattern)} is absolute; patterns are relative to the searched directory (set path to choose it)`)
  }
  if (pattern.split('/').includes('..')) {
    throw new FsError('INVALID_ARGUMENT', `${what} ${JSON.stringify(pattern)} has a ".." segment; patterns match below the searched directory (set path to search elsewhere)`)
  }
  return new Minimatch(pattern, options)
}

/**
 * Whether grep and glob enter a directory (by its path relative to the searched one): not when
 * its name is ignored, nor when `matcher` is given and cannot match below it (minimatch's
 * partial match; negated and comment patterns cannot prune).
 */
export function descender(ignore: ReadonlySet<string> | undefined, matcher?: Minimatch): (rel: string) => boolean {
  const prune = matcher && !matcher.negate && !matcher.comment ? matcher : undefined
  return (rel) => !ignore?.has(rel.slice(rel.lastIndexOf('/') + 1)) && (!prune || prune.match(rel, true))
}
