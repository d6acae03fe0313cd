import { mkdir, mkdtemp, realpath, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defineTool, type Effect, type Tool } from '@dogu/core'
import { type ChangeLog, createFsTools } from '@dogu/fs'
import { createShellTool, ProcessTable } from '@dogu/shell'
import Schema from 'schemastery'
import type { SandboxSpec } from './scenario'

// The tools of a run, each recording what actually ran: the clear arguments its `run` got,
// and the effect and target its own `permission()` gives for them (I1 compares those with
// what was decided). `deploy` carries a secret field; `write`, `edit` and `bash` are the real
// fs and shell tools in a temporary workspace, with their host-free defaults (what a user of
// `createFsTools` / `createShellTool` gets).

/** One call that reached a tool's `run`. */
export interface RunRecord {
  tool: string
  callId: string
  args: Record<string, unknown>
  effect: Effect
  target?: string
  sandboxed?: boolean
  /** Argument keys the tool's schema does not name: a field it ignores, whatever a person set it to. */
  unknownKeys: string[]
}

export const deployArgs = Schema.object({
  env: Schema.union(['staging', 'prod', 'dev'] as const).required(),
  token: Schema.string().role('secret').pattern(/^sk-/).required(),
  ref: Schema.string().default('main'),
})

export const noteArgs = Schema.object({
  text: Schema.string().required(),
  count: Schema.natural().min(1).max(3).default(1),
})

const peekArgs = Schema.object({ q: Schema.string().required() })

/** A temporary workspace beside a folder that stands for "outside it", with protected paths in place. */
export interface Workspace {
  root: string
  workspace: string
  outside: string
  /** Where the app's stores go: not part of what I3 compares. */
  stores: string
}

export async function makeWorkspace(): Promise<Workspace> {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'dogu-invariants-')))
  const workspace = join(root, 'ws')
  const outside = join(root, 'outside')
  await mkdir(join(workspace, '.git', 'hooks'), { recursive: true })
  await mkdir(join(workspace, 'sub'), { recursive: true })
  await mkdir(outside)
  const stores = join(root, 'stores')
  await mkdir(stores)
  await writeFile(join(workspace, '.git', 'config'), '[core]\n\trepositoryformatversion = 0\n')
  await writeFile(join(workspace, '.git', 'HEAD'), 'ref: refs/heads/main\n')
  await writeFile(join(workspace, '.env'), 'API_KEY=not-for-the-model\n')
  await writeFile(join(workspace, 'a.txt'), 'a\n')
  await writeFile(join(outside, 'keep.txt'), 'outside\n')
  return { root, workspace, outside, stores }
}

function instrument(tool: Tool, runs: RunRecord[]): Tool {
  const named = tool.args.type === 'object' && tool.args.dict ? new Set(Object.keys(tool.args.dict)) : undefined
  return defineTool({
    ...tool,
    groups: [...tool.groups],
    run: (args, call) => {
      const spec = tool.permission?.(args, call)
      const unknownKeys = named ? Object.keys(args ?? {}).filter((key) => !named.has(key)) : []
      runs.push({ tool: tool.name, callId: call.id, args: structuredClone(args), effect: spec?.effect ?? tool.traits.effect, target: spec?.target, sandboxed: spec?.sandboxed, unknownKeys })
      return tool.run(args, call)
    },
  })
}

export interface Toolbox {
  tools: Tool[]
  runs: RunRecord[]
  /** The fs tools' change log: what `write` and `edit` changed, for undo. */
  changes: ChangeLog
  processes?: ProcessTable
}

/** The tools of one run. `bash` only when `sandbox` is given. */
export function makeTools(workspace: Workspace, sandbox?: SandboxSpec): Toolbox {
  const runs: RunRecord[] = []
  const deploy = defineTool({
    name: 'deploy',
    description: 'Deploy a build',
    args: deployArgs,
    traits: { effect: 'exec' },
    permission: ({ env }) => ({ name: 'deploy:run', target: env }),
    preview: ({ env, ref }) => ({ text: `rolls out ${ref} to ${env}` }),
    // Never echoes the token: any secret text a channel shows came from the runtime.
    run: ({ env, ref }) => `deployed ${ref} to ${env}`,
  })
  const note = defineTool({
    name: 'note',
    description: 'Write a note',
    args: noteArgs,
    traits: { effect: 'write' },
    run: ({ text, count }) => `noted ${count}× ${text}`,
  })
  const peek = defineTool({
    name: 'peek',
    description: 'Read something',
    args: peekArgs,
    traits: { effect: 'read' },
    run: ({ q }) => `saw ${q}`,
  })
  const fs = createFsTools({ workspace: workspace.workspace })
  const tools: Tool[] = [deploy, note, peek, fs.tools.write as Tool, fs.tools.edit as Tool]
  let processes: ProcessTable | undefined
  if (sandbox) {
    processes = new ProcessTable()
    tools.push(createShellTool({
      workspace: workspace.workspace,
      processes,
      timeout: 20_000,
      sandbox: {
        mode: sandbox.sandbox === 'off' ? 'off' : 'auto',
        network: sandbox.network,
        // "unavailable": a bubblewrap that is not there, as on a host without it.
        ...(sandbox.sandbox === 'unavailable' ? { bwrapPath: join(workspace.root, 'no-bwrap') } : {}),
      },
    }) as Tool)
  }
  return { tools: tools.map((tool) => instrument(tool, runs)), runs, changes: fs.changes, processes }
}
