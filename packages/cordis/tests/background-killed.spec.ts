import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import type { BackgroundTask, ToolResult } from '@dogu/core'
import { Context } from 'cordis'
import { build } from 'esbuild'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { guardLogs, guardOutput } from '../../../test-support/log-guard'
import { DoguPlugin } from '../src'

let dir: string
let child: ChildProcess | undefined
let app: Context | undefined

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dogu-background-killed-'))
})

afterEach(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL')
    await once(child, 'exit')
  }
  child = undefined
  await app?.fiber.dispose()
  app = undefined
  await rm(dir, { recursive: true, force: true })
})

/** Bundles tests/killed-app.ts with the workspace sources, so no build step is needed. */
async function bundleApp(): Promise<string> {
  const outfile = join(dir, 'killed-app.mjs')
  await build({
    entryPoints: [resolve(import.meta.dirname, 'killed-app.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['source'],
    logLevel: 'error',
  })
  return outfile
}

describe('BackgroundService: a killed process', () => {
  it('a task running when the process gets SIGKILL comes back interrupted in the next app on the same store', async () => {
    const entry = await bundleApp()
    // Its cwd is the test's folder too: a default path of the app's would land there, not in the checkout.
    const started = child = spawn(process.execPath, [entry, dir], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] })
    // What the app prints on stderr before it is killed is a warning or an error.
    guardOutput(started.stderr!, 'killed-app')
    const exited = once(started, 'exit')
    const lines = createInterface({ input: started.stdout! })
    const [line] = await Promise.race([
      once(lines, 'line'),
      exited.then(([code, signal]) => { throw new Error(`the app exited (${code ?? signal}) before it reported its task`) }),
    ]) as [string]
    const { result, onDisk } = JSON.parse(line) as { result: ToolResult; onDisk: BackgroundTask[] }
    expect(result).toMatchObject({ status: 'background', taskId: expect.stringMatching(/^task_/) })
    const taskId = result.taskId!
    expect(onDisk).toEqual([expect.objectContaining({ id: taskId, tool: 'slow', status: 'running' })])

    started.kill('SIGKILL')
    expect(await exited).toEqual([null, 'SIGKILL'])

    app = new Context()
    guardLogs(app)
    await app.plugin(DoguPlugin, {
      audit: { storePath: join(dir, 'audit.jsonl') }, permissions: { storePath: join(dir, 'permissions.json') },
      background: { storePath: join(dir, 'tasks.json') },
    })
    const task = app.background.get(taskId)
    expect(task).toMatchObject({ id: taskId, tool: 'slow', callId: 'c1', session: { id: 's1' }, status: 'interrupted' })
    expect(task!.settledAt).toBeGreaterThanOrEqual(onDisk[0].startedAt)
    expect(task!.result).toBeUndefined()
    const [status] = await app.tools.execute([{ id: 'c2', name: 'task_status', arguments: { id: taskId } }], { session: { id: 's1' } })
    expect(status.content).toBe(`Task ${taskId} (slow) was interrupted: the service stopped while it was running, so its result is lost. Run the tool again if it is still needed.`)
  })
})
