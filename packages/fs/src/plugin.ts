import Schema from 'schemastery'
import type { Tool } from '@dogu/core'
import { type FsTools, createFsTools } from './create-fs-tools'

/** What the plugin needs from its host: a `tools` service (Cordis `@dogu/cordis`, or any look-alike). */
export interface ToolHost {
  tools: {
    define(tool: Tool): () => void
  }
}

export const name = 'dogu-fs'
export const inject = ['tools']

export interface Config {
  workspace: string
  readOnly: string[]
  protected: string[]
  prefix: string
  ignore: string[]
}

export const Config: Schema<Config> = Schema.object({
  workspace: Schema.string().required().description('The read-write root the file tools work in.'),
  readOnly: Schema.array(Schema.string()).default([]).description('Extra roots the tools may read but never write.'),
  protected: Schema.array(Schema.string()).default(['.git', '.env', '.env.*']).description('Globs that stay read-only; one without "/" matches a name at any depth (.git protects sub/.git/config), one with "/" is relative to the workspace. A match covers everything below it.'),
  prefix: Schema.string().default('').description('Prefix for the tool names, e.g. "fs_".'),
  ignore: Schema.array(Schema.string()).default(['.git', 'node_modules']).description('Directory names grep and glob do not enter.'),
})

/**
 * Defines the six file tools on `ctx.tools`. Each definition is undone when the plugin is
 * disposed (the tools service ties definitions to the defining plugin). Returns the pack, so
 * a host holding the plugin can reach `changes` for undo.
 */
export function apply(ctx: ToolHost, config: Config): FsTools {
  const fs = createFsTools(config)
  for (const tool of Object.values(fs.tools)) ctx.tools.define(tool)
  return fs
}
