/** What a path is for: reading never needs more than a root; writing also needs a writable one. */
export type PathAccess = 'read' | 'write'

/** What a directory entry is; a link is never reported as what it points to. */
export type EntryKind = 'file' | 'directory' | 'symlink' | 'other'

/**
 * @internal Points between a path's check and its use, where a test can race: `open`
 * (before anything is opened), `rename` (a write's temporary file is written, before it
 * replaces the target), `unlink` (undo checked the created file, before deleting it).
 */
export type CheckStep = 'open' | 'rename' | 'unlink'

/** @internal Awaited at each `CheckStep` with the checked path's target. */
export type CheckStepHook = (step: CheckStep, target: string) => unknown

/** @internal The real location behind a CheckedPath; only the backend modules read it. */
export interface CheckedLocation {
  /** The canonical root holding `real`; the backend opens everything below it one name at a time. */
  root: string
  /** Canonical absolute path of the target (for a new target: the canonical parent joined with the missing names). */
  real: string
  /** For a new target: the nearest existing ancestor (canonical) and the names below it, the last being the target's. */
  base: string
  missing: string[]
  access: PathAccess
  /** What the target was when checked; `undefined` for a new target. */
  kind?: EntryKind
  /** Test seam, from the resolver's options. */
  step?: CheckStepHook
}

const locations = new WeakMap<CheckedPath, CheckedLocation>()
const token = Symbol('CheckedPath')

/**
 * A path that went through `PathResolver.resolve`: inside an allowed root, symbolic links
 * resolved, access checked. It cannot be built any other way, and it does not expose the
 * real path as a value a tool could swap back in; the file backend reads it.
 */
export class CheckedPath {
  /** Relative to the workspace root (`.` for the root itself), or absolute in a read-only root outside it. */
  readonly target: string
  /** How the path is shown to the model: relative to the session's working directory when inside the workspace. */
  readonly display: string
  readonly access: PathAccess
  /** Whether the target existed when it was checked. */
  readonly exists: boolean
  /** What it was when checked (`file`, `directory` or `other`; links are resolved). */
  readonly kind?: EntryKind

  /** @internal */
  constructor(key: symbol, location: CheckedLocation, target: string, display: string) {
    if (key !== token) throw new TypeError('CheckedPath is created by PathResolver.resolve()')
    this.target = target
    this.display = display
    this.access = location.access
    this.exists = location.missing.length === 0
    if (location.kind) this.kind = location.kind
    locations.set(this, location)
    Object.freeze(this)
  }
}

/** @internal */
export function issueCheckedPath(location: CheckedLocation, target: string, display: string): CheckedPath {
  return new CheckedPath(token, Object.freeze({ ...location, missing: Object.freeze([...location.missing]) as string[] }), target, display)
}

/** @internal Throws for anything that did not come from the resolver. */
export function locate(path: CheckedPath): CheckedLocation {
  const location = locations.get(path)
  if (!location) throw new TypeError('not a CheckedPath issued by PathResolver.resolve()')
  return location
}
