import Dogu, { type DoguPlugin } from '@dogu/cordis'
import type { CallInfo, Session, ToolResult } from '@dogu/core'
import { WebUI } from '@dogu/webui'
import * as Lookup from '@dogu-external/lookup'
import * as Countdown from '@dogu-external/lookup/countdown'
import * as Notes from '@dogu-external/notes'
import * as Fs from '@dogu/fs'
import * as Http from '@dogu/http'
import * as Shell from '@dogu/shell'
import { Context, type Fiber, type Plugin } from 'cordis'
import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { clearLine, createInterface, cursorTo } from 'node:readline'
import { type Chat, createChat, type ModelConfig } from './chat'
import { format } from 'node:util'
import { type CommandScope, commands } from './commands'
import { lockDataDir } from './data-lock'
import { LineReader } from './line-reader'
import { INTERRUPTED, terminalAsker } from './terminal-asker'

/** Commands that run even typed without their `/` while chatting. */
const bare = new Set(['help', 'exit'])

/** A second Ctrl-C at an idle prompt within this many milliseconds of the first exits. */
const EXIT_WINDOW = 2_000

export interface PlaygroundOptions {
  /** @default process.stdin */
  input?: NodeJS.ReadableStream
  /** @default process.stdout */
  output?: NodeJS.WritableStream
  /** Show a prompt; otherwise commands are echoed, for a readable transcript. @default input.isTTY */
  interactive?: boolean
  /** Config of `@dogu/cordis`. */
  dogu?: DoguPlugin.Config
  lookup?: Partial<Lookup.Config>
  /** The slow example tool, `countdown`. */
  countdown?: Partial<Countdown.Config>
  /** Notes live in memory unless `dataDir` is set. */
  notes?: Partial<Notes.Config>
  /** Milliseconds a permission question waits for an answer (`dogu.permissions.askTimeout`). @default 300_000 */
  askTimeout?: number
  /**
   * Who the calls come from, and who answers the permission questions at the terminal.
   * @default { id: 'playground', userId: 'playground-user', platform: 'terminal', authority: 1 }
   */
  session?: Session
  /**
   * The debug console (`@dogu/webui`), whose address is printed on its own line at start;
   * `false` leaves it out. `yarn start` serves it on the first free port from 5177.
   * @default false
   */
  webui?: WebUI.Config | false
  /**
   * The model to chat with. With one, free text at the prompt is a chat turn and commands
   * start with `/` (`/list`); without, the prompt takes commands only.
   */
  model?: ModelConfig
  /**
   * The playground's own folder: its lock (`.lock`), grants (`dogu/permissions.json`),
   * background tasks (`dogu/background.json`) and the default workspace. One playground at
   * a time may use it; a second one fails with `DataInUseError`. `yarn start --data DIR` or
   * `DOGU_DATA=DIR` set it from the command line.
   * @default 'data'
   */
  dataDir?: string
  /** The file tools' and the shell's sandbox folder, created if missing. @default `${dataDir}/workspace` */
  workspace?: string
  /** More plugins to load after the playground's own (a tool plugin to try), each without config. */
  plugins?: Plugin<Context>[]
}

/**
 * Runs the playground: a Cordis app with Dogu's services and the `external/` plugins,
 * driven by commands read line by line from `input`. Resolves after `exit` or at the end
 * of the input, once the app is disposed.
 */
export async function startPlayground(options: PlaygroundOptions = {}): Promise<void> {
  const input = options.input ?? process.stdin
  const output = options.output ?? process.stdout
  const interactive = options.interactive ?? !!(input as { isTTY?: boolean }).isTTY
  const session = options.session ?? { id: 'playground', userId: 'playground-user', platform: 'terminal', authority: 1 }
  /** Whether the prompt is on screen, waiting for a command: what is printed then goes above it. */
  let idle = false
  const print = (text: string) => {
    if (!idle || !interactive || asking) return void output.write(text + '\n')
    // A console call or a background notice while the user types: the line goes above a
    // redrawn prompt that keeps what was typed, as a shell prints a job's notice.
    clearLine(output as NodeJS.WritableStream, 0)
    cursorTo(output as NodeJS.WritableStream, 0)
    output.write(text + '\n')
    rl.prompt(true)
  }
  const dataDir = resolve(options.dataDir ?? 'data')
  // Before anything else: a second playground on this folder stops here, having touched nothing.
  const unlock = lockDataDir(dataDir, print)

  let chat: Chat | undefined
  /** The command running now: Ctrl-C aborts it (a `call` ends `cancelled`). */
  let running: AbortController | undefined
  /** The permission question waiting for an answer: Ctrl-C answers it as a denial. */
  let asking: (() => void) | undefined
  /** When Ctrl-C last showed the exit hint at an idle prompt. */
  let hinted = -Infinity
  const rl = createInterface({ input, output: interactive ? output : undefined, terminal: interactive, prompt: 'dogu> ' })
  // Ctrl-C as in a shell: it stops what runs (a question, a call, a chat turn); at an idle
  // prompt it says how to leave, and a second press soon after leaves.
  rl.on('SIGINT', () => {
    if (asking) return asking()
    if (running) return running.abort()
    if (chat?.busy) return chat.abort()
    if (Date.now() - hinted < EXIT_WINDOW) return rl.close()
    hinted = Date.now()
    // What was typed is dropped, as a shell does; the hint goes on a line of its own.
    rl.write(null, { ctrl: true, name: 'e' })
    rl.write(null, { ctrl: true, name: 'u' })
    output.write('\n')
    print('(To exit, press Ctrl-C again or type exit)')
    rl.prompt()
  })
  const lines = new LineReader(rl)

  const ctx = new Context()
  // Cordis would print these to the console; here they belong in the transcript.
  ctx.on('internal/error', (error) => print(`! ${error instanceof Error ? error.message : String(error)}`))
  ctx.on('internal/warn', (text, ...args) => print(`! ${format(text, ...args)}`))
  ctx.on('tools/call-start', (info: CallInfo) => print(`  → ${info.name} ${info.args === undefined ? '' : JSON.stringify(info.args)}`.trimEnd()))
  ctx.on('tools/call-progress', (info: CallInfo, message: string) => print(`  … ${info.name}: ${message}`))
  ctx.on('tools/call-end', (info: CallInfo, result: ToolResult) => print(`  ← ${info.name} ${result.status} in ${result.durationMs.toFixed(1)} ms`))

  const fibers: Fiber[] = []
  try {
    const dogu: DoguPlugin.Config = {
      ...options.dogu,
      permissions: {
        storePath: join(dataDir, 'dogu/permissions.json'),
        ...options.dogu?.permissions,
        ...options.askTimeout !== undefined ? { askTimeout: options.askTimeout } : {},
      },
      background: { storePath: join(dataDir, 'dogu/background.json'), ...options.dogu?.background },
      audit: { storePath: join(dataDir, 'dogu/audit.jsonl'), ...options.dogu?.audit },
    }
    fibers.push(await ctx.plugin(Dogu, dogu))
    fibers.push(await ctx.plugin(Lookup, options.lookup))
    fibers.push(await ctx.plugin(Notes, options.notes))
    // A slow tool that moves to the background: for trying tasks and progress.
    fibers.push(await ctx.plugin(Countdown, options.countdown))
    // The real tool packs, in a sandbox folder: file tools, the shell, http_fetch.
    const workspace = resolve(options.workspace ?? join(dataDir, 'workspace'))
    mkdirSync(workspace, { recursive: true })
    // The schema fills in the defaults (its input type names every field).
    const fsConfig = Fs.Config({ workspace } as Fs.Config)
    fibers.push(await ctx.plugin({
      name: Fs.name,
      inject: Fs.inject,
      apply(ctx: Context) {
        const pack = Fs.apply(ctx, fsConfig)
        // The console's File changes view lists this pack's writes and edits, with undo.
        ctx.inject(['webui'], (ctx) => {
          ctx.webui.addChangeLog(pack.changes)
        })
      },
    }))
    // The playground's grants, notes and tasks live in its data folder: hidden from sandboxed commands.
    fibers.push(await ctx.plugin(Shell, { workspace, sandbox: { dataDir } }))
    fibers.push(await ctx.plugin(Http, {}))
    for (const plugin of options.plugins ?? []) fibers.push(await ctx.plugin(plugin))
    // Questions are answered by the person at the terminal, who is the session's user.
    const asker = terminalAsker({
      print,
      approver: {
        id: session.userId ?? session.id,
        ...(session.platform !== undefined ? { platform: session.platform } : {}),
        ...(session.authority !== undefined ? { authority: session.authority } : {}),
      },
      async ask(question, signal, ctrlC = 'n') {
        // Asked while the prompt waits (a call from the console): the question replaces the
        // prompt line, and what was typed there is dropped, so the answer is only the answer.
        const atPrompt = idle && interactive
        if (atPrompt) {
          rl.write(null, { ctrl: true, name: 'e' })
          rl.write(null, { ctrl: true, name: 'u' })
          clearLine(output as NodeJS.WritableStream, 0)
          cursorTo(output as NodeJS.WritableStream, 0)
        }
        output.write(question)
        // Ctrl-C answers the question: the read is abandoned, and the asker denies.
        const interrupt = new AbortController()
        const interrupted = new Promise<typeof INTERRUPTED>((resolve) => {
          // Resolved before the read is abandoned, so the race sees the interrupt first.
          asking = () => {
            resolve(INTERRUPTED)
            interrupt.abort()
          }
        })
        try {
          const answer = await Promise.race([lines.read(AbortSignal.any([signal, interrupt.signal]), { first: true }), interrupted])
          if (answer === INTERRUPTED) output.write(`${ctrlC} (Ctrl-C)\n`)
          else if (!interactive) output.write(`${answer ?? ''}\n`)
          return answer
        } finally {
          asking = undefined
          if (atPrompt && idle) rl.prompt()
        }
      },
    })
    fibers.push(await ctx.inject(['permissions'], (ctx) => {
      ctx.permissions.asker(asker)
    }))

    if (options.webui) fibers.push(await ctx.plugin(WebUI, options.webui))
    const names = ctx.tools.list().map((tool) => tool.name)
    // Chatting, free text goes to the model, so every hint names commands with their `/`.
    const prefix = options.model ? '/' : ''
    print(`Dogu playground: ${names.length} tools (${names.join(', ')}). Type "${prefix}help" for commands.`)
    // Alone on its line, so a terminal makes it a link and a script can read it.
    if (options.webui) print(ctx.get('webui')!.url)
    if (options.model) {
      chat = createChat({ ctx, session, model: options.model, print, write: (text) => { output.write(text) } })
      print(`Chatting with ${options.model.model} at ${options.model.baseURL}: type a message; commands start with "/" (/help, /exit).`)
    }
    let n = 0
    const scope: Omit<CommandScope, 'signal'> = { ctx, session, print, prefix, dataDir, nextCallId: () => `call_${++n}` }
    while (true) {
      if (interactive) rl.prompt()
      idle = true
      const line = await lines.read().finally(() => { idle = false })
      if (line === undefined) break
      // A line typed since the hint: the next Ctrl-C hints again rather than exits.
      hinted = -Infinity
      const text = line.trim()
      if (!text || text.startsWith('#')) continue
      if (!interactive) print(`dogu> ${text}`)
      // Nobody means to ask the model "help": a bare `help` or `exit` is the command.
      if (chat && !text.startsWith('/') && !bare.has(text)) {
        await chat.send(text)
        continue
      }
      const [, name, args] = /^\/?(\S+)\s*([\s\S]*)$/.exec(text)!
      const command = commands.get(name)
      if (!command) {
        print(`Unknown command "${name}". Type "${prefix}help" for commands.`)
        continue
      }
      running = new AbortController()
      try {
        if (await command.run(args, { ...scope, signal: running.signal }) === 'exit') break
      } catch (error) {
        print(`! ${error instanceof Error ? error.message : String(error)}`)
      } finally {
        running = undefined
      }
    }
  } finally {
    chat?.dispose()
    rl.close()
    try {
      for (const fiber of fibers.reverse()) await fiber.dispose()
    } finally {
      unlock()
    }
  }
}
