// One bot instance for two-instances.sql.spec.ts (and the tier's other *.sql.spec.ts), run
// as a child process (bundled by esbuild, see ./instance-process.ts): a Koishi 4 app with the
// mock adapter, the MySQL driver (@koishijs/plugin-database-mysql), koishi-plugin-dogu with
// chat approvals, task notices and durable questions on (`durable` in the config turns them
// off), and a tool plugin: `save` (effect write: the default rules ask; it keeps the notes it
// saved, for durable-two-instances.sql.spec.ts), `slow` (effect read, a short `timeout`
// trait: it moves to the background and runs until `finish`) and `probe` (effect read: it
// counts its runs, for quotas-two-instances.sql.spec.ts).
// Plugins are loaded as a koishi.yml loads them; the driver connects asynchronously, so
// `database` appears after Dogu's services exist.
//
// Argument: the instance's config as JSON (`InstanceConfig` in ./protocol.ts).
//
// Protocol: JSON lines. The test writes commands to stdin, `{ "id": 1, "cmd": "...", ... }`;
// each is answered on stdout by `{ "id": 1, "ok": true, "value": ... }` or
// `{ "id": 1, "ok": false, "error": "..." }`. Commands run concurrently (a `call` that waits
// for an approval does not hold up the `say` that answers it):
//   call  { tool, user, args? }  runs a tool as `user` in channel `room` of the mock platform,
//                                 as an agent would for that user; value: the ToolResult
//                                 (`task_status` is a tool too: `args: { id }`)
//   say   { user, text, refreshWhileRead? }
//                                 `user` sends `text` in `room`; value: the bot's replies. With
//                                 refreshWhileRead, the pending table is read again (the poll's
//                                 refresh) while the message is read, before the chat looks up
//                                 its author: a poll that lands then, without a timing margin
//   refresh                       reads the pending table again now (the poll's refresh); value: none
//   grants                        value: ctx.permissions.grants()
//   revoke { grant }              value: ctx.permissions.revoke(grant), the grant's id
//   tasks                         value: ctx.background.list()
//   finish { callId, text }       the pending `slow` run of that call returns `text`; value: whether there was one
//   probes                        value: how many times `probe` ran in this process
//   saves                         value: the notes `save` saved in this process, in order
//   pending                       value: ctx.permissions.pending() as { id, tool, summary, restored? }[]
//   quota { user }                value: ctx.tools.registry.quotas.status() for `user`'s session (QuotaStatus[])
//   stop                          stops the app (stores flushed); the process then exits by itself
// Unprompted lines, `{ "event": ... }`:
//   ready { instanceId, pid, patchedDriver }
//                                 the app runs on the database: Dogu's tables are defined (its
//                                 stores are moving onto it; what they hold may show a moment
//                                 later) and its engines loaded (with `quotas`, the quota table is
//                                 made too); patchedDriver: see patchIndexes (./mysql-indexes.ts)
//   sent  { channelId, text }     a message the bot posted on its own (an approval question, a task notice)
//   log   { level, name, text }   a Koishi logger line (info, warn, error), an `internal/error` or
//                                 `internal/warning` (name `internal/error`, …), an uncaught error
//                                 or unhandled rejection (name `process`)
// The instance writes nothing else to stdout: Koishi's logger prints through `log` events only.
// It exits when stdin closes (the test is gone).
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { defineTool, type Session as DoguSession } from '@dogu/core'
import MySQL from '@koishijs/plugin-database-mysql'
import Mock from '@koishijs/plugin-mock'
import { App, type Context, h, Logger, Schema } from 'koishi'
import * as Dogu from '../../src'
import { patchIndexes } from './mysql-indexes'
import type { Command, InstanceConfig, Message } from './protocol'

const CHANNEL = 'room'

// Koishi's CJS packages come through as their `module.exports` (`{ default }`) from ESM source.
const unwrap = <T>(module: T): T => (module as { default?: T }).default ?? module

function send(message: Message) {
  process.stdout.write(`${JSON.stringify(message)}\n`)
}

const text = (value: unknown) => value instanceof Error ? (value.stack ?? value.message) : String(value)

// Every Koishi logger line goes to the test, none to the console.
Logger.levels.base = Logger.INFO
Logger.targets.splice(0, Logger.targets.length, {
  colors: 0,
  record: (record: { name: string; type: string; content: string }) => send({ event: 'log', level: record.type, name: record.name, text: record.content }),
} as (typeof Logger.targets)[number])
process.on('uncaughtException', (error) => send({ event: 'log', level: 'error', name: 'process', text: `uncaught exception: ${text(error)}` }))
process.on('unhandledRejection', (reason) => send({ event: 'log', level: 'error', name: 'process', text: `unhandled rejection: ${text(reason)}` }))

// Read from the start, so that a test gone before `ready` (stdin closed) ends the process too.
const lines = createInterface({ input: process.stdin })
let stopping: Promise<void> | undefined
// The test is gone: nothing will ask for anything again. After `stop`, the test closes
// stdin and the process ends once nothing is left running (a handle left open shows).
lines.on('close', () => {
  if (!stopping) process.exit(1)
})

async function main() {
  const config = JSON.parse(process.argv[2]) as InstanceConfig
  const app = new App()
  app.on('internal/error', (error) => send({ event: 'log', level: 'error', name: 'internal/error', text: text(error) }))
  app.on('internal/warning', (warning) => send({ event: 'log', level: 'warn', name: 'internal/warning', text: text(warning) }))

  const mock = app.plugin(unwrap(Mock), { selfId: '514' })
  const driver = unwrap(MySQL)
  const patchedDriver = patchIndexes(driver as never)
  app.plugin(driver as never, { ...config.mysql })
  app.plugin(Dogu, {
    approvals: { enabled: true },
    notices: { enabled: true },
    permissions: { durable: config.durable ?? true, syncInterval: config.grantSyncMs, storePath: join(config.dir, 'permissions.json') },
    background: { instanceId: config.instanceId, syncInterval: config.taskSyncMs, leaseMs: config.leaseMs, storePath: join(config.dir, 'background.json') },
    audit: { storePath: join(config.dir, 'audit.jsonl') },
    ...config.quotas ? { tools: { quotas: config.quotas } } : {},
  })
  const pending = new Map<string, (text: string) => void>()
  let probes = 0
  const saved: string[] = []
  app.plugin({
    name: 'sql-test-tools',
    inject: ['tools'],
    apply(ctx: Context) {
      ctx.tools.define(defineTool({
        name: 'save',
        description: 'Save a note',
        args: Schema.object({ note: Schema.string().required() }),
        traits: { effect: 'write' },
        run: (args: { note: string }) => {
          saved.push(args.note)
          return `saved ${args.note}`
        },
      }))
      ctx.tools.define(defineTool({
        name: 'slow',
        description: 'A long job',
        traits: { effect: 'read', timeout: config.slowTimeoutMs },
        run: (_, call) => new Promise<string>((resolve) => { pending.set(call.id, resolve) }),
      }))
      ctx.tools.define(defineTool({
        name: 'probe',
        description: 'Counts its runs',
        traits: { effect: 'read', parallel: true },
        run: () => `probe ${++probes}`,
      }))
    },
  })
  await app.start()

  // The driver connects after the app started; Dogu's stores then move onto the database.
  const deadline = Date.now() + config.readyTimeoutMs
  const onDatabase = () => {
    const database = app.get('database') as { tables?: Record<string, unknown> } | undefined
    return !!database?.tables?.dogu_grant && !!database.tables.dogu_task && !!app.get('background') && (!config.quotas || !!database.tables.dogu_quota)
  }
  while (!onDatabase()) {
    if (Date.now() > deadline) throw new Error(`not on the database within ${config.readyTimeoutMs} ms (database ${app.get('database') ? 'loaded' : 'not loaded'}, background service ${app.get('background') ? 'loaded' : 'not loaded'})`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  await app.lifecycle.flush()
  await app.permissions.engine.ready
  await app.lifecycle.flush()
  // The quota table is made as the database appears; the next instance to start must find it made.
  if (config.quotas) await (app.get('database') as unknown as { prepared(): Promise<void> }).prepared()

  // What the bot posts on its own: the mock bot can only reply to a mock client's message.
  const bot = app.bots[0]
  const original = bot.sendMessage.bind(bot)
  let posted = 0
  bot.sendMessage = async (channelId, content, referrer, options) => {
    if (options?.session) return original(channelId, content, referrer, options)
    send({ event: 'sent', channelId, text: h.normalize(content).map((element) => element.toString(true)).join('') })
    return [`${config.instanceId}-m${++posted}`]
  }

  let calls = 0
  const session = (userId: string): DoguSession => ({ id: `mock:${CHANNEL}`, platform: 'mock', channelId: CHANNEL, guildId: CHANNEL, userId })
  const stop = () => stopping ??= (async () => {
    const grants = app.permissions.engine
    const tasks = app.background.engine
    // As `koishi start` does on SIGINT: `exit` first, while the driver is open (the audit log
    // writes its queue then; a batch still in flight when the driver closes would fail in it).
    await app.parallel('exit', 'SIGINT')
    // The mock bot first: disposed by the app's stop, after the bots service, it throws.
    mock.dispose()
    await app.stop()
    // What the stores are written by: their last writes land before the process ends.
    await Promise.all([grants.stop(), tasks.dispose()])
  })()

  const handlers: { [K in Command['cmd']]: (command: Extract<Command, { cmd: K }>) => unknown } = {
    call: async ({ tool, user, args }) => {
      const [result] = await app.tools.execute([{ id: `${config.instanceId}-${process.pid}-${++calls}`, name: tool, arguments: args ?? {} }], { session: session(user) })
      return result
    },
    say: async ({ user, text, refreshWhileRead }) => {
      if (!refreshWhileRead) return app.mock.client(user, CHANNEL).receive(text)
      // Past the context's tracing proxy, which would keep the method on itself.
      const permissions = (app.permissions as unknown as Record<symbol, typeof app.permissions>)[Symbol.for('cordis.original')] ?? app.permissions
      let refreshed = false
      // Dogu's methods are properties of Koishi's permissions service: this one is put back after one use.
      const own = Object.getOwnPropertyDescriptor(permissions, 'resolveSession')!
      const resolve = permissions.resolveSession
      // Once: the chat's look-up of who wrote it (approverOf) waits for the refresh first.
      Object.defineProperty(permissions, 'resolveSession', {
        configurable: true,
        value: async (session: Parameters<typeof resolve>[0]) => {
          Object.defineProperty(permissions, 'resolveSession', own)
          await permissions.engine.refreshPending()
          refreshed = true
          return resolve.call(permissions, session)
        },
      })
      const replies = await app.mock.client(user, CHANNEL).receive(text)
      if (!refreshed) throw new Error('refreshWhileRead: nothing looked up who wrote the message, so no refresh ran while it was read')
      return replies
    },
    refresh: () => app.permissions.engine.refreshPending(),
    grants: () => app.permissions.grants(),
    revoke: ({ grant }) => app.permissions.revoke(grant),
    tasks: () => app.background.list(),
    finish: ({ callId, text }) => {
      const resolve = pending.get(callId)
      pending.delete(callId)
      resolve?.(text)
      return !!resolve
    },
    probes: () => probes,
    saves: () => saved,
    // What a request is, without its edit form (functions, a schema): JSON lines carry data only.
    pending: () => app.permissions.pending().map(({ id, tool, summary, restored }) => ({ id, tool, summary, ...(restored ? { restored } : {}) })),
    quota: ({ user }) => app.tools.registry.quotas.status(session(user)),
    stop: () => stop(),
  }

  lines.on('line', async (line) => {
    let id: number | undefined
    try {
      const command = JSON.parse(line) as Command
      id = command.id
      const handler = handlers[command.cmd] as ((command: Command) => unknown) | undefined
      if (!handler) throw new Error(`unknown command ${JSON.stringify(command.cmd)}`)
      send({ id, ok: true, value: await handler(command) })
    } catch (error) {
      send({ id: id ?? -1, ok: false, error: text(error) })
    }
  })
  send({ event: 'ready', instanceId: config.instanceId, pid: process.pid, patchedDriver })
}

main().catch((error) => {
  send({ event: 'log', level: 'error', name: 'process', text: `the instance failed to start: ${text(error)}` })
  process.exit(1)
})
