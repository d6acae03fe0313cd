import type { Tool } from '@dogu/core'
import { ChangeLog } from './change-log'
import { FsError } from './errors'
import { FileLocks } from './file-locks'
import { DEFAULT_LIMITS, type FsContext, type FsLimits } from './fs-context'
import { PathResolver, type PathResolverOptions } from './path-resolver'
import { editTool } from './tools/edit'
import { globTool } from './tools/glob'
import { grepTool } from './tools/grep'
import { listTool } from './tools/list'
import { readTool } from './tools/read'
import { writeTool } from './tools/write'

export interface FsToolsOptions extends PathResolverOptions {
  /** Put before every tool name (`fs_` gives `fs_read`), for hosts that already have a `read`. @default '' */
  prefix?: string
  /** Directory names grep and glob do not enter below the directory they search. @default ['.git', 'node_modules'] */
  ignore?: string[]
  limits?: Partial<FsLimits>
  /** How many file changes the change log keeps for undo. @default 1000 */
  maxChanges?: number
}

/** What `protected` is when not given: the plugin's default, and the premise of the shell's `trustWorkspaceGit`. */
export const DEFAULT_PROTECTED: readonly string[] = Object.freeze(['.git', '.env', '.env.*'])

/** The six tools of a pack, the resolver they share, and the log of their file changes. */
export interface FsTools {
  tools: {
    read: Tool
    write: Tool
    edit: Tool
    grep: Tool
    glob: Tool
    list: Tool
  }
  resolver: PathResolver
  changes: ChangeLog
}

/**
 * Creates the file tools for one workspace, host-free: define them with any tool registry.
 * Its defaults are the plugin's: `protected` is `['.git', '.env', '.env.*']` unless given
 * (`protected: []` protects nothing).
 *
 * @example
 * const fs = createFsTools({ workspace: '/srv/bot/work', protected: ['.git', '.env*'] })
 * for (const tool of Object.values(fs.tools)) ctx.tools.define(tool)
 * // later: await fs.changes.undo(changeId)
 */
export function createFsTools(options: FsToolsOptions): FsTools {
  const prefix = options.prefix ?? ''
  if (typeof prefix !== 'string') throw new FsError('INVALID_OPTIONS', 'prefix must be a string')
  const limits = { ...DEFAULT_LIMITS, ...options.limits }
  for (const [key, value] of Object.entries(limits)) {
    if (!(typeof value === 'number' && value > 0)) throw new FsError('INVALID_OPTIONS', `limits.${key} must be a positive number`)
  }
  const resolver = new PathResolver({ ...options, protected: options.protected ?? [...DEFAULT_PROTECTED] })
  const locks = new FileLocks()
  const changes = new ChangeLog({ resolver, locks, maxBytes: limits.writeBytes, maxEntries: options.maxChanges })
  const context: FsContext = { resolver, changes, locks, limits, prefix, ignore: new Set(options.ignore ?? ['.git', 'node_modules']), permitted: new WeakMap() }
  const tools = {
    read: readTool(context),
    write: writeTool(context),
    edit: editTool(context),
    grep: grepTool(context),
    glob: globTool(context),
    list: listTool(context),
  }
  return { tools, resolver, changes }
}
