import type { BackgroundEngine, BackgroundEngineOptions, BackgroundTask, ListTasksOptions, WaitTaskOptions } from '../background'
import type { RunningCall } from '../background-port'
import { attachEngine, type EngineSlots } from './attach-engine'
import type { HostBaseClass } from './host-plugin'

/**
 * `ctx.background` for any host: the task methods over a `BackgroundEngine`. The host's
 * class builds the engine and its store, loads it, and then hands the registry's timed-out
 * calls to it with `backgroundHandOver`.
 *
 * @example
 * export class BackgroundService extends backgroundHost(Service) {
 *   readonly engine = new BackgroundEngine({ store: new JsonFileTaskStore('data/tasks.json') })
 * }
 */
export function backgroundHost<B extends HostBaseClass>(Base: B) {
  abstract class BackgroundHost extends Base {
    /** The host-free engine; it is `ctx.tools.registry.background` while the service is loaded. */
    abstract readonly engine: BackgroundEngine

    /** Takes over a running call (the tool pipeline does this on timeout). */
    adopt(call: RunningCall): BackgroundTask {
      return this.engine.adopt(call)
    }

    /** A task by id, or `undefined` when unknown or evicted. */
    get(id: string): BackgroundTask | undefined {
      return this.engine.get(id)
    }

    /** Tasks in the order they started, filtered by session and status. */
    list(options?: ListTasksOptions): BackgroundTask[] {
      return this.engine.list(options)
    }

    /** Resolves with the task once it settles, or as it is after `timeout` ms. See `BackgroundEngine.wait`. */
    wait(id: string, options: WaitTaskOptions): Promise<BackgroundTask | undefined> {
      return this.engine.wait(id, options)
    }

    /** Aborts a running task's call and resolves with the task once it has settled. */
    cancel(id: string, reason?: string): Promise<BackgroundTask | undefined> {
      return this.engine.cancel(id, reason)
    }
  }
  return BackgroundHost
}

/** The retention every host's background service takes, beside where and how it stores tasks. */
export interface BackgroundHostConfig {
  /** @default 200 */
  maxTasks?: number
  /** @default 7 days */
  maxAgeMs?: number
  /** @default 50_000 */
  maxResultLength?: number
}

/** The engine's retention limits a background service's config sets, the same on every host. */
export function backgroundLimits(config: BackgroundHostConfig): NonNullable<BackgroundEngineOptions['limits']> {
  return { maxTasks: config.maxTasks, maxAgeMs: config.maxAgeMs, maxResultLength: config.maxResultLength }
}

/**
 * Timed-out calls of `registry` handed to `engine`, once its stored tasks are loaded.
 * `attach` (an effect's setup) starts the hand-over and returns `stop`; `stop` ends it and
 * then stops the running tasks, in that order, so that no call is handed to a stopping
 * engine. The tasks end `interrupted`, as a restart would leave them. A host whose
 * framework disposes tool plugins before this service calls `stop` earlier, when it sees
 * the app stopping; a second call is harmless.
 *
 * @example
 * const handOver = backgroundHandOver(ctx.tools.registry, engine)
 * ctx.effect(handOver.attach)
 */
export function backgroundHandOver(registry: EngineSlots, engine: BackgroundEngine): { attach(): () => Promise<void>; stop(): Promise<void> } {
  let detach = () => {}
  const stop = () => {
    detach()
    return engine.dispose()
  }
  return {
    attach: () => {
      detach = attachEngine(registry, 'background', engine)
      return stop
    },
    stop,
  }
}
