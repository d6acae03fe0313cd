import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defineTool, type Session, type Tool } from '@dogu/core'
import Schema from 'schemastery'
import { afterEach, beforeEach, vi } from 'vitest'
import type { AppOptions, ConformanceHost, HostApp, HostPlugin, PluginContext } from './host'

export const session: Session = { id: 's1', userId: 'u1', platform: 'test', authority: 1 }

const echoArgs = Schema.object({
  text: Schema.string().required().description('What to repeat'),
  times: Schema.natural().min(1).max(3).default(1),
})

export const echo = defineTool({
  name: 'echo',
  description: 'Repeat a text',
  args: echoArgs,
  traits: { effect: 'read' },
  run: ({ text, times }) => Array(times).fill(text).join(' '),
})

export const save = defineTool({
  name: 'save',
  description: 'Save a text',
  args: Schema.object({ text: Schema.string().required() }),
  traits: { effect: 'write' },
  run: () => 'saved',
})

/** A plugin that defines `tools` and counts its runs. */
export function definer(name: string, ...tools: Tool<any>[]) {
  const counts = { apply: 0 }
  const plugin: HostPlugin = {
    name,
    inject: ['tools'],
    apply(ctx: PluginContext) {
      counts.apply++
      for (const tool of tools.length ? tools : [echo]) ctx.tools.define(tool)
    },
  }
  return { plugin, counts }
}

/**
 * Per test: a fresh directory, and the apps made in it, stopped (stores written) before the
 * directory goes. `app(options)` makes one on the host.
 */
export function useApps(host: ConformanceHost) {
  let dir = ''
  const apps: HostApp[] = []
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-conformance-'))
  })
  afterEach(async () => {
    vi.useRealTimers()
    for (const app of apps.splice(0).reverse()) await app.stop()
    await rm(dir, { recursive: true, force: true })
  })
  return {
    get dir() {
      return dir
    },
    async app(options: Omit<AppOptions, 'dir'> = {}): Promise<HostApp> {
      const app = await host.create({ dir, ...options })
      apps.push(app)
      return app
    },
  }
}

/** One call through `ctx.tools.execute`; resolves with its result. */
export async function call(app: HostApp, name: string, args: object = {}, who: Session = session) {
  const [result] = await app.tools.execute([{ id: `c-${name}`, name, arguments: args as Record<string, unknown> }], { session: who })
  return result
}

/**
 * Resolves once `check()` holds, letting queued I/O and callbacks run between tries; fails
 * after a bounded number of turns rather than waiting forever. Timers are not involved, so
 * fake timers do not move.
 */
export async function until(check: () => boolean, what: string, turns = 1_000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (check()) return
    await new Promise((resolve) => setImmediate(resolve))
  }
  throw new Error(`still waiting for ${what} after ${turns} turns`)
}
