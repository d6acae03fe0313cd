import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { PermissionEngine, type PermissionMode, type PermissionRule, type ToolResult, ToolRegistry } from '@dogu/core'
import { createShellTool, ProcessTable, type ShellToolOptions } from '../src'

/** A fresh directory under the system's temporary directory, by its real path. */
export function tempDir(prefix: string): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)))
}

/** Writes text files as the model's `write` tool would: parents created, plain mode 0644. */
export function writeFiles(root: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
}

/**
 * Runs `program` and fails with what to install when it is missing: tests that need a
 * program fail rather than skip.
 */
export function requireProgram(program: string, install: string): void {
  const result = spawnSync(program, ['--version'], { encoding: 'utf8' })
  if ((result.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') {
    throw new Error(`\`${program}\` is not installed; these tests run the real program (${install})`)
  }
}

/** Runs git with a fixed identity, for setting up repositories as their owner would. */
export function git(cwd: string, ...args: string[]): string {
  const result = spawnSync('git', ['-c', 'user.email=owner@example.com', '-c', 'user.name=owner', '-c', 'init.defaultBranch=main', '-c', 'protocol.file.allow=always', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
  })
  if (result.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${result.stderr}`)
  return result.stdout
}

/** A shell command that creates `marker`: the payload an attack tries to run. */
export const touch = (marker: string) => `touch ${marker}`

export interface GuardedShell {
  /** Runs one `bash` call through the pipeline and the permission engine. */
  bash(command: string, cwd?: string): Promise<ToolResult>
  /** The command lines a person was asked about (each answered "deny"). */
  asked: string[]
  dispose(): Promise<void>
}

/**
 * The `bash` tool behind a real permission engine in `mode` (`acceptEdits`: file edits
 * are allowed, `exec` asks) with `rules`, and an asker that records each request and
 * denies it. The sandbox is off unless `options.sandbox` says otherwise: the classifier is
 * what most of these tests attack.
 */
export function guardedShell(options: Omit<ShellToolOptions, 'processes'>, mode: PermissionMode = 'acceptEdits', rules: PermissionRule[] = []): GuardedShell {
  const engine = new PermissionEngine({ mode, rules })
  const asked: string[] = []
  engine.addAsker(async (request) => {
    asked.push(request.permission.target ?? '')
    return { decision: 'deny', by: 'owner', reason: 'denied by the test' }
  })
  const registry = new ToolRegistry()
  registry.permissions = engine
  const processes = new ProcessTable()
  // The classifier on its own: the sandbox escape suite runs these attacks confined.
  registry.define(createShellTool({ sandbox: { mode: 'off' }, ...options, processes }))
  return {
    asked,
    async bash(command, cwd) {
      const [result] = await registry.toolset({ session: { id: 's1', userId: 'owner', cwd } }).execute([{ id: 'c1', name: 'bash', arguments: { command } }])
      return result
    },
    dispose: () => processes.dispose(),
  }
}

/** Whether the payload ran. */
export const ran = (marker: string) => existsSync(marker)
