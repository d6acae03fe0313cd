import { resolve } from 'node:path'
import {
  BackgroundEngine,
  backgroundHandOver,
  type BackgroundEvents,
  backgroundHost,
  type BackgroundHostConfig,
  backgroundLimits,
  createTaskTools,
  DEFAULT_RETENTION,
  JsonFileTaskStore,
} from '@dogu/core'
import { type Context, type Fiber, Service } from 'cordis'
import Schema from 'schemastery'
// For the `ctx.tools` declaration this service injects.
import type {} from './tools-service'
import { cordisLogger } from './cordis-logger'

declare module 'cordis' {
  interface Context {
    background: BackgroundService
  }

  // `ctx.on('background/settled', (task) => ...)`: a task ended; `task.session` says where.
  interface Events<in C extends Context = Context> extends BackgroundEvents {}
}

/**
 * `ctx.background`: calls that outlive their timeout continue here as tasks. While this
 * service is loaded it is `ctx.tools.registry.background`, and the model gets the tools
 * `task_status` and `task_cancel`. Task records persist in a JSON file; after a restart a
 * task that was running is `interrupted`.
 *
 * When the service stops (its own unload or reload, the Dogu plugin's or the tools
 * service's, or the app's), running tasks are aborted and recorded as `interrupted`. Only
 * unloading the plugin that defined a task's tool, while the service runs, ends it
 * `cancelled`.
 *
 * @example
 * ctx.on('background/settled', (task) => {
 *   ctx.logger.info('task %s (%s) %s', task.id, task.tool, task.status)
 * })
 * const task = await ctx.background.wait(taskId, { timeout: 30_000 })
 */
export class BackgroundService extends backgroundHost(Service) {
  static inject = ['tools']

  static Config: Schema<BackgroundService.Config> = Schema.object({
    storePath: Schema.string()
      .description('JSON file for task records. Default: data/dogu/background.json under the working directory.'),
    maxTasks: Schema.natural().min(1).default(DEFAULT_RETENTION.maxTasks)
      .description('Most tasks kept; beyond it the oldest settled tasks are removed (running ones never).'),
    maxAgeMs: Schema.natural().min(1).role('ms').default(DEFAULT_RETENTION.maxAgeMs)
      .description('Settled tasks older than this (since they ended) are removed.'),
    maxResultLength: Schema.natural().min(1).default(DEFAULT_RETENTION.maxResultLength)
      .description('Longest stored result content; longer content is cut with a marker.'),
  })

  override readonly engine: BackgroundEngine

  constructor(ctx: Context, config: BackgroundService.Config = {}) {
    super(ctx, 'background')
    const logger = cordisLogger(ctx)
    this.engine = new BackgroundEngine({
      store: new JsonFileTaskStore(resolve(config.storePath ?? 'data/dogu/background.json'), { logger }),
      limits: backgroundLimits(config),
      onSettled: (task) => {
        try {
          ctx.emit('background/settled', task)
        } catch (error) {
          ctx.emit(ctx, 'internal/error', error)
        }
      },
      logger,
    })
  }

  /** Active once the stored tasks are loaded; only then are calls handed over. */
  async [Service.init]() {
    const { ctx, engine } = this
    await engine.load()
    const handOver = backgroundHandOver(ctx.tools.registry, engine)
    ctx.effect(handOver.attach, 'ctx.background: adopt timed-out calls of ctx.tools')
    // Cordis disposes a stopping app's plugins last-loaded first: a tool's plugin goes before
    // this service, and its running task would end `cancelled` as if someone unloaded the
    // tool. Stopping here first records it `interrupted`, as a restart would.
    onStopping(ctx, handOver.stop)
    for (const tool of createTaskTools(engine)) ctx.tools.define(tool)
  }
}

/** Cordis' `FiberState.UNLOADING`: a const enum its typings do not let isolated modules read. */
const UNLOADING = 5

/**
 * Calls `stop` as soon as something `ctx`'s plugin stands on begins to unload: the app, a
 * plugin that loaded it (the Dogu plugin), the provider of a service it injects, or the
 * plugin itself. Cordis emits `internal/status` for such a fiber a microtask before it
 * disposes anything, so `stop` runs before any plugin of the app is cleaned up.
 *
 * This reads Cordis facts no documentation promises (the status event's timing, the
 * state's number, `fiber.parent` and `fiber.store`); tests/cordis-lifecycle.spec.ts fails
 * the day one changes.
 */
function onStopping(ctx: Context, stop: () => void): void {
  const self = ctx.fiber
  ctx.on('internal/status', (fiber) => {
    if (fiber.state === UNLOADING && standsOn(self, fiber)) stop()
  })
}

/** True when `fiber` is `self`, one of its ancestors, or (recursively) what they inject. */
function standsOn(self: Fiber, fiber: Fiber): boolean {
  const seen = new Set<Fiber>()
  const queue = [self]
  for (const current of queue) {
    if (current === fiber) return true
    if (seen.has(current)) continue
    seen.add(current)
    const parent = current.parent.fiber
    if (parent !== current) queue.push(parent)
    for (const impl of Object.values(current.store ?? {})) if (impl) queue.push(impl.fiber)
  }
  return false
}

export namespace BackgroundService {
  export interface Config extends BackgroundHostConfig {
    /** @default 'data/dogu/background.json' (relative to the working directory) */
    storePath?: string
  }
}
