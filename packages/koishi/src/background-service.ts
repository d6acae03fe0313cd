import { resolve } from 'node:path'
import {
  BackgroundEngine,
  backgroundHandOver,
  type BackgroundEvents,
  backgroundHost,
  type BackgroundHostConfig,
  backgroundLimits,
  createTaskTools,
  DatabaseTaskStore,
  DEFAULT_RETENTION,
  JsonFileTaskStore,
  type MinatoDatabase,
  type TaskStore,
} from '@dogu/core'
import { type Context, Schema, Service } from 'koishi'
import { defaultInstanceId } from './instance-id'
import { followDatabase, koishiDatabase } from './koishi-database'
import { eventEmitter } from './koishi-events'
import { koishiLogger } from './koishi-logger'
import { described } from './schema-text'
// For the `ctx.tools` declaration this service injects.
import type {} from './tools-service'

declare module 'koishi' {
  interface Context {
    background: BackgroundService
  }

  // `ctx.on('background/settled', (task) => ...)`: a task ended; `task.session` says where.
  interface Events<C extends Context = Context> extends BackgroundEvents {}
}

/**
 * `ctx.background` on Koishi: the same contract as `@dogu/cordis`' service. Calls that
 * outlive their timeout continue here as tasks; the model follows them with `task_status`
 * and `task_cancel`. Task records persist in a JSON file under Koishi's base directory;
 * after a restart a task that was running is `interrupted`.
 *
 * When the service stops (its own unload or reload, the tools service's, the Dogu
 * plugin's, or the app's), running tasks are aborted and recorded as `interrupted`. Only
 * unloading the plugin that defined a task's tool, while the service runs, ends it
 * `cancelled`.
 */
export class BackgroundService extends backgroundHost(Service) {
  static inject = ['tools']

  static Config: Schema<BackgroundService.Config> = Schema.object({
    storePath: described(Schema.string(),
      'JSON file for task records without a database. Default: data/dogu/background.json under Koishi\'s base directory. With a database, records live in the dogu_task table and this file is migrated into it once.',
      '未加载数据库时保存后台任务记录的 JSON 文件。默认：Koishi 根目录下的 data/dogu/background.json。加载数据库后记录保存在 dogu_task 表中，此文件会被迁移进表一次。'),
    instanceId: described(Schema.string(),
      'With a database: this instance\'s name among the instances sharing it; unique, and the same across restarts. Default: host name and base directory.',
      '加载数据库时：本实例在共用数据库的实例中的名称；须唯一，且重启前后不变。默认：主机名加 Koishi 根目录。'),
    leaseMs: described(Schema.natural().min(1_000).role('ms').default(30_000),
      'With a database: the lease of a running task, renewed every third of it; once it lapses, other instances report the task interrupted.',
      '加载数据库时：运行中任务的租约时长，每过三分之一续约一次；租约过期后，其他实例将该任务报告为中断。'),
    syncInterval: described(Schema.natural().min(100).role('ms').default(5_000),
      'With a database: milliseconds between reads of the task table, for tasks other instances run.',
      '加载数据库时：两次读取任务表之间的毫秒数，用于得知其他实例运行的任务。'),
    maxTasks: described(Schema.natural().min(1).default(DEFAULT_RETENTION.maxTasks),
      'Most tasks kept; beyond it the oldest settled tasks are removed (running ones never).',
      '最多保留的任务数；超出时移除最早结束的任务（运行中的任务不会被移除）。'),
    maxAgeMs: described(Schema.natural().min(1).role('ms').default(DEFAULT_RETENTION.maxAgeMs),
      'Settled tasks older than this (since they ended) are removed.',
      '结束超过此时长的任务会被移除。'),
    maxResultLength: described(Schema.natural().min(1).default(DEFAULT_RETENTION.maxResultLength),
      'Longest stored result content; longer content is cut with a marker.',
      '保存的结果内容的最大长度；超出部分截断并加标记。'),
  })

  override readonly engine: BackgroundEngine
  /** Where records persist now: the database store while a database is loaded, else the file. */
  private store: TaskStore

  constructor(ctx: Context, config: BackgroundService.Config = {}) {
    // Not immediate: `ctx.background` is provided once `start()` has loaded the stored tasks.
    super(ctx, 'background')
    this.config = config
    const logger = koishiLogger(ctx)
    const emit = eventEmitter(ctx)
    const path = resolve(ctx.baseDir ?? process.cwd(), config.storePath ?? 'data/dogu/background.json')
    const instanceId = config.instanceId || defaultInstanceId(ctx.baseDir ?? process.cwd())
    // With a database, records are shared by every instance on it; the file is migrated once.
    const storeFor = (database: MinatoDatabase | undefined): TaskStore => database
      ? new DatabaseTaskStore({ database, instanceId, leaseMs: config.leaseMs, logger, migrateFrom: path })
      : new JsonFileTaskStore(path, { logger })
    this.store = storeFor(koishiDatabase(ctx))
    this.engine = new BackgroundEngine({
      store: this.store,
      limits: backgroundLimits(config),
      onSettled: (task) => emit('background/settled', task),
      logger,
    })
    // The database may start after this service, be reloaded, or go: running tasks go on,
    // and the engine's store switches under them.
    followDatabase(ctx, {
      switch: (database) => void this.engine.useStore(this.store = storeFor(database)),
      lost: (reason) => {
        if (this.store instanceof DatabaseTaskStore) this.store.detach(reason)
      },
    })
  }

  protected override async start() {
    const { ctx, engine } = this
    await engine.load()
    // Unloaded while the store loaded: nothing was handed over yet.
    if (ctx.scope.uid === null) return void engine.dispose()
    const handOver = backgroundHandOver(ctx.tools.registry, engine)
    // For cordis 3's effects and listeners, a stop that returns nothing: the tasks settle on their own.
    const stop = () => void handOver.stop()
    ctx.effect(() => {
      handOver.attach()
      return stop
    })
    // cordis 3 resets the plugins that need `ctx.tools` one by one when it is withdrawn, and
    // disposes a stopping app's plugins in load order: a tool's plugin may go before this
    // service, and its running task would end `cancelled` as if someone unloaded the tool.
    // Stopping first records it `interrupted`, as a restart would.
    ctx.on('internal/before-service', (name, value) => {
      if (name === 'tools' && value == null) stop()
    }, true)
    const root = ctx.root
    ctx.effect(() => root.on('dispose', stop, true))
    // With a database: the heartbeat keeps this instance's running tasks leased; the poll
    // brings in the tasks of other instances (and theirs that lapsed, as interrupted).
    const shared = () => this.store instanceof DatabaseTaskStore ? this.store : undefined
    const leaseMs = this.config.leaseMs ?? 30_000
    // Neither once the bot exits or the app stops: its database driver may already have closed
    // its pool. On `exit` (`koishi start` on SIGINT) the queries in flight are awaited, so none
    // is left in the pool as the driver closes it.
    let exiting = false
    const active = () => !exiting && root.lifecycle.isActive
    const inFlight = new Set<Promise<unknown>>()
    const track = (query: Promise<unknown>) => {
      inFlight.add(query)
      void query.finally(() => inFlight.delete(query))
    }
    ctx.setInterval(() => {
      if (!active()) return
      const renewing = shared()?.renew().catch((error) => {
        if (active()) koishiLogger(ctx).warn('renewing background task leases failed: %s', error)
      })
      if (renewing) track(renewing)
    }, Math.max(1, Math.floor(leaseMs / 3)))
    ctx.setInterval(() => {
      if (shared() && active()) track(engine.refresh())
    }, this.config.syncInterval ?? 5_000)
    ctx.on('exit', async () => {
      exiting = true
      await Promise.allSettled([...inFlight])
    })
    for (const tool of createTaskTools(engine)) ctx.tools.define(tool)
  }
}

export namespace BackgroundService {
  export interface Config extends BackgroundHostConfig {
    /** @default 'data/dogu/background.json' (under Koishi's base directory) */
    storePath?: string
    /** With a database: this instance's id, unique and stable across restarts. @default `${hostname}:${baseDir}` */
    instanceId?: string
    /** With a database: a running task's lease, renewed every third. @default 30_000 */
    leaseMs?: number
    /** With a database: milliseconds between reads of the task table. @default 5_000 */
    syncInterval?: number
  }
}
