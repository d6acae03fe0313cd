import { defineTool, type Tool } from '@dogu/core'
import type { Context } from 'cordis'
import { setTimeout as sleep } from 'node:timers/promises'
import Schema from 'schemastery'

/** What this plugin needs of its host: `ctx.tools.define`, as `@dogu/cordis` provides it. */
export interface ToolHost {
  define(tool: Tool): () => void
}

export const name = 'countdown'
export const inject = ['tools']

export interface Config {
  /** Milliseconds before a call moves to the background (when `ctx.background` is loaded). */
  timeout: number
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  timeout: Schema.natural().role('ms').min(1).default(5_000).description('Milliseconds before a countdown moves to the background.'),
})

/**
 * Defines the `countdown` tool: a slow tool that does nothing but count down, reporting
 * progress each second. Its timeout is shorter than a default run, so with the background
 * service loaded it moves to the background: a way to try tasks, progress and notices.
 */
export function apply(ctx: Context & { tools: ToolHost }, config: Config) {
  // Declared before defineTool, so `run` gets typed arguments (see docs/getting-started.md).
  const args = Schema.object({
    seconds: Schema.natural().max(120).default(15).description('How many seconds to count down'),
  })
  ctx.tools.define(defineTool({
    name: 'countdown',
    description: `Count down a number of seconds (15 by default, at most 120), reporting each second, then say so. A slow tool for trying background tasks: a countdown longer than ${config.timeout / 1000} s continues as a task.`,
    args,
    traits: { effect: 'read', parallel: true, timeout: config.timeout, background: true },
    run: async ({ seconds }, call) => {
      for (let left = seconds; left > 0; left--) {
        call.progress(`${left} s left`)
        // Rejects as soon as the call is cancelled (or unloaded): the countdown stops there.
        await sleep(1_000, undefined, { signal: call.signal })
      }
      return { text: `Countdown of ${seconds} s finished.`, data: { seconds } }
    },
  }))
}
