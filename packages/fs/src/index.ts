import { Config, apply, inject, name } from './plugin'

export * from './change-log'
export * from './checked-path'
export * from './create-fs-tools'
export * from './errors'
export * from './file-change'
export { sha256 } from './fs-backend'
export type { FsLimits } from './fs-context'
export type { GrepOptions, GrepReport } from './grep-files'
export * from './path-resolver'
export * from './plugin'

export default { name, inject, Config, apply }
