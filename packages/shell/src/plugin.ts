import type { Tool } from '@dogu/core'
import Schema from 'schemastery'
import { ProcessTable } from './process-table'
import { createShellTool } from './shell-tool'

/** The part of a Cordis (or Koishi) context this plugin uses; no host import needed. */
export interface ShellHost {
  tools: { define(tool: Tool): () => void }
  effect(execute: () => () => unknown, label?: string): unknown
}

export const name = 'dogu-shell'
export const inject = ['tools']

export interface Config {
  workspace: string
  shell: string
  timeout: number
  maxTimeout: number
  headBytes: number
  tailBytes: number
  killGrace: number
  env: Record<string, string>
  trustWorkspaceGit: boolean
}

export const Config: Schema<Partial<Config> & Pick<Config, 'workspace'>, Config> = Schema.object({
  workspace: Schema.string().required().description('Workspace root. Commands run in the session\'s working directory inside it.'),
  shell: Schema.string().default('bash').description('Shell program, run as `shell -c command`.'),
  timeout: Schema.natural().role('ms').min(1).default(120_000).description('Default timeout of a command.'),
  maxTimeout: Schema.natural().role('ms').min(1).default(600_000).description('Largest timeout a call may ask for.'),
  headBytes: Schema.natural().role('byte').default(16384).description('Bytes kept from the start of stdout and of stderr.'),
  tailBytes: Schema.natural().role('byte').default(16384).description('Bytes kept from the end of stdout and of stderr.'),
  killGrace: Schema.natural().role('ms').default(2000).description('Time between SIGTERM and SIGKILL when a command is stopped.'),
  env: Schema.dict(String).default({}).description('Environment variables added for commands.'),
  trustWorkspaceGit: Schema.boolean().default(true).description('The workspace\'s own .git is out of the model\'s reach (the file tools protect .git by default); turn off when it is not, and git commands ask.'),
})

/** Registers `bash`; disposing the plugin terminates every command still running. */
export function apply(ctx: ShellHost, config: Config) {
  const processes = new ProcessTable({ killGrace: config.killGrace })
  ctx.effect(() => () => processes.dispose(), 'bash: terminate running commands')
  ctx.tools.define(createShellTool({ ...config, processes }))
}
