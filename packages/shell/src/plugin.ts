import type { Tool } from '@dogu/core'
import Schema from 'schemastery'
import { ProcessTable } from './process-table'
import { SandboxConfig, type SandboxOptions } from './sandbox-config'
import { createShellTool } from './shell-tool'

/** The part of a Cordis (or Koishi) context this plugin uses; no host import needed. */
export interface ShellHost {
  tools: { define(tool: Tool): () => void }
  effect(execute: () => () => unknown, label?: string): unknown
  /** Koishi's app folder (koishi.yml, data/): hidden inside the sandbox unless `sandbox.dataDir` says otherwise. */
  baseDir?: string
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
  protected: string[]
  trustWorkspaceGit?: boolean
  sandbox: SandboxConfig
}

export const Config: Schema<Partial<Omit<Config, 'sandbox'>> & Pick<Config, 'workspace'> & { sandbox?: SandboxOptions }, Config> = Schema.object({
  workspace: Schema.string().required().description('Workspace root. Commands run in the session\'s working directory inside it.'),
  shell: Schema.string().default('bash').description('Shell program, run as `shell -c command`.'),
  timeout: Schema.natural().role('ms').min(1).default(120_000).description('Default timeout of a command.'),
  maxTimeout: Schema.natural().role('ms').min(1).default(600_000).description('Largest timeout a call may ask for.'),
  headBytes: Schema.natural().role('byte').default(16384).description('Bytes kept from the start of stdout and of stderr.'),
  tailBytes: Schema.natural().role('byte').default(16384).description('Bytes kept from the end of stdout and of stderr.'),
  killGrace: Schema.natural().role('ms').default(2000).description('Time between SIGTERM and SIGKILL when a command is stopped.'),
  env: Schema.dict(String).default({}).description('Environment variables added for commands.'),
  protected: Schema.array(String).default(['.git', '.env', '.env.*']).description('The file tools\' protected globs (give both plugins the same list): read-only inside the sandbox, and removed after a command that created one.'),
  trustWorkspaceGit: Schema.boolean().description('The workspace\'s own .git is out of the model\'s reach (default: whether `protected` covers .git); turn off when it is not, and git commands ask.'),
  sandbox: SandboxConfig.description('The OS sandbox (bubblewrap on Linux) every command runs in.'),
})

/**
 * Registers `bash` once the sandbox is detected (its description says what it found);
 * disposing the plugin terminates every command still running.
 */
export function apply(ctx: ShellHost, config: Config) {
  const processes = new ProcessTable({ killGrace: config.killGrace })
  ctx.effect(() => () => processes.dispose(), 'bash: terminate running commands')
  const dataDir = config.sandbox?.dataDir ?? baseDirOf(ctx)
  ctx.tools.define(createShellTool({ ...config, processes, sandbox: { ...config.sandbox, ...dataDir ? { dataDir } : {} } }))
}

// Koishi's context has `baseDir`; Cordis 4's throws on a property nobody provides.
function baseDirOf(ctx: ShellHost): string | undefined {
  try {
    return typeof ctx.baseDir === 'string' ? ctx.baseDir : undefined
  } catch {
    return undefined
  }
}
