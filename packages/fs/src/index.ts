import { Config, apply, inject, name } from './plugin'

export { ChangeLog, type UndoOutcome } from './change-log'
export { CheckedPath, type EntryKind, type PathAccess } from './checked-path'
export { createFsTools, type FsTools, type FsToolsOptions } from './create-fs-tools'
export { FsError } from './errors'
export type { DiffHunk, FileChange } from './file-change'
export type { FsLimits } from './fs-context'
export { PathResolver, type PathResolverOptions, type ResolveOptions } from './path-resolver'
export { Config, apply, inject, name, type ToolHost } from './plugin'

export default { name, inject, Config, apply }
