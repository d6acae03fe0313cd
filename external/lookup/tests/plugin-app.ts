import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Dogu, { ToolService } from '@dogu/cordis'
import { Context, type Fiber, type Plugin } from 'cordis'
import { afterEach } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'

export const session = { id: 's1' }

// Disposed (awaited) after each test, before its temp dirs are removed.
const loaded: Fiber[] = []
const dirs: string[] = []
afterEach(async () => {
  for (const fiber of loaded.splice(0).reverse()) await fiber.dispose()
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
})

/**
 * An example plugin on ToolService alone, which is all it needs; with `dogu`, on the
 * default plugin (tools, permissions, background), its stores in a temp dir. `call` runs
 * the tool `name` once.
 */
export async function pluginApp(plugin: Plugin, name: string, config?: object, { dogu = false } = {}) {
  const ctx = new Context()
  guardLogs(ctx)
  if (dogu) {
    const dir = await mkdtemp(join(tmpdir(), `dogu-${name}-`))
    dirs.push(dir)
    loaded.push(await ctx.plugin(Dogu, {
      audit: { storePath: join(dir, 'audit.jsonl') }, permissions: { storePath: join(dir, 'permissions.json') },
      background: { storePath: join(dir, 'background.json') },
    }))
  } else {
    loaded.push(await ctx.plugin(ToolService))
  }
  const fiber = await ctx.plugin(plugin, config)
  loaded.push(fiber)
  const call = async (args: unknown) => {
    const [result] = await ctx.tools.toolset({ session }).execute([{ id: 'c1', name, arguments: args as string }])
    return result
  }
  return { ctx, fiber, call }
}
