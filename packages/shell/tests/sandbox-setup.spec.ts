// A hidden path that vanishes between the sandbox's realpath and its lstat (a racing
// process removed it) is a clear refusal, not an ENOENT thrown from deep inside (issue 43,
// item 7). The race is made exact by failing lstat for that one path.
import * as fs from 'node:fs'
import { join } from 'node:path'
import { ToolRegistry } from '@dogu/core'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { createShellTool, ProcessTable } from '../src'

const { vanishing } = vi.hoisted(() => ({ vanishing: new Set<string>() }))
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>()
  const lstatSync = ((path: fs.PathLike, ...rest: unknown[]) => {
    if (vanishing.has(String(path))) throw Object.assign(new Error(`ENOENT: no such file or directory, lstat '${path}'`), { code: 'ENOENT' })
    return (real.lstatSync as (...args: unknown[]) => unknown)(path, ...rest)
  }) as typeof real.lstatSync
  return { ...real, default: { ...real, lstatSync }, lstatSync }
})

const base = fs.realpathSync(fs.mkdtempSync('/var/tmp/dogu-setup-spec-'))
afterAll(() => fs.rmSync(base, { recursive: true, force: true }))

describe('bash sandbox: a hidden path that vanishes during set-up', () => {
  it('is refused with SANDBOX_SETUP and a message that says what changed; nothing runs', async () => {
    const workspace = join(base, 'ws')
    const secret = join(base, 'secret')
    fs.mkdirSync(workspace)
    fs.mkdirSync(secret)
    vanishing.add(secret)
    const processes = new ProcessTable()
    const registry = new ToolRegistry()
    registry.define(createShellTool({ workspace, processes, sandbox: { mode: 'required', hidden: [secret] } }))
    try {
      const [result] = await registry.toolset({ session: { id: 's1', userId: 'u' } }).execute([{ id: 'c1', name: 'bash', arguments: { command: 'ls' } }])
      expect(result).toMatchObject({ status: 'error' })
      expect(result.content).toContain(`the hidden path ${secret} changed while the sandbox was being set up (ENOENT); nothing ran, try again`)
      expect(result.content).not.toContain('Exit code')
    } finally {
      await processes.dispose()
    }
  })
})
