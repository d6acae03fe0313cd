import { mkdtemp, rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type ScriptedServer, startScriptedServer } from '@dogu/agent'
import { defineTool } from '@dogu/core'
import memory from '@koishijs/plugin-database-memory'
import mock from '@koishijs/plugin-mock'
import { App, type Context, type ForkScope, Schema } from 'koishi'
import { guardLogs } from '../../../../test-support/log-guard'
import * as Dogu from '../../src'
import { Outbox } from '../chat-harness'
import * as adapter from './adapter'
import { noteModel } from './note-model'
import { within as withinMs } from '../../../../test-support/within'

/** Waits at most 10 s: a chat turn on loopback takes well under one. */
export const within = <T>(promise: Promise<T>, what: string, ms = 10_000) => withinMs(promise, what, ms)

// Koishi loads plugins through require: ChatLuna's ESM entry imports Koishi's, which does not load in Node.
const require = createRequire(import.meta.url)
const ChatLuna = require('koishi-plugin-chatluna')
// Koishi's CJS packages come through as `{ default }` under ESM.
const MockPlugin = (mock as unknown as { default?: typeof mock }).default ?? mock
const MemoryPlugin = (memory as unknown as { default?: typeof memory }).default ?? memory

// ChatLuna names a model `<platform>/<model>`.
const PLATFORM = 'scripted'
const MODEL = 'scripted-model'

/**
 * A Koishi app in which a chat message reaches ChatLuna's own room and agent: the mock
 * adapter, the in-memory database (ChatLuna keeps rooms and history there), the Dogu
 * plugin with chat approvals, ChatLuna in Agent mode (`plugin`) on the test adapter, the
 * scripted model on loopback, and a tool plugin with one write tool, `save_note`.
 */
export async function agentApp() {
  const dir = await mkdtemp(join(tmpdir(), 'dogu-chatluna-agent-'))
  let server: ScriptedServer | undefined
  let app: App | undefined
  // Taken down last to first while the app still runs. Left to the app's stop, the adapter
  // goes after Koishi's logger service, and ChatLuna, uninstalling it, logs through that
  // logger: a TypeError (koishi-plugin-chatluna 1.3.36, services/chat uninstallPlugin).
  const forks: ForkScope[] = []
  const dispose = async () => {
    // What Dogu's stores are written by, taken before Dogu goes: stopped before their folder goes.
    const engines = app ? [app.get('background')?.engine, app.get('permissions')?.engine] : []
    for (const fork of forks.splice(0).reverse()) fork.dispose()
    await app?.lifecycle.flush()
    await app?.stop()
    await Promise.all(engines.map((engine) => engine && ('stop' in engine ? engine.stop() : engine.dispose())))
    await server?.close()
    await rm(dir, { recursive: true, force: true })
  }
  try {
    server = await startScriptedServer({ script: noteModel, model: MODEL })
    app = new App()
    // ChatLuna keeps its presets and a temp folder under the app's base directory.
    app.baseDir = dir
    // Any error or warning it logs fails the test (docs/testing.md): ChatLuna logs a failed chat
    // and answers with an apology, which the channel alone would show as a turn that went well.
    guardLogs(app)
    // The mock bot too: disposed by the app's stop, after the bots service, it throws.
    forks.push(app.plugin(MockPlugin, { selfId: '514' }))
    app.plugin(MemoryPlugin)
    await app.start()
    await app.mock.initUser('alice', 1)

    forks.push(app.plugin(Dogu, {
      approvals: { enabled: true },
      notices: { enabled: false },
      permissions: { storePath: join(dir, 'permissions.json') },
      background: { storePath: join(dir, 'background.json') },
    }))
    const notes: string[] = []
    forks.push(app.plugin({
      name: 'notes',
      inject: ['tools'],
      apply(ctx: Context) {
        ctx.tools.define(defineTool({
          name: 'save_note',
          description: 'Save a note for later',
          args: Schema.object({ text: Schema.string().required().description('The note') }),
          traits: { effect: 'write' },
          run: ({ text }: { text: string }) => {
            notes.push(text)
            return `saved note #${notes.length}: ${text}`
          },
        }))
      },
    }))
    forks.push(app.plugin(ChatLuna, {
      defaultModel: `${PLATFORM}/${MODEL}`,
      // Agent mode: the chat chain that gives the model ChatLuna's tools.
      defaultChatMode: 'plugin',
      // No "still thinking" message while the approval waits: the channel holds what the turn said.
      sendThinkingMessage: false,
    }))
    forks.push(app.plugin(adapter, { endpoint: server.baseURL, platform: PLATFORM, model: MODEL, proxyMode: 'off' }))
    // Plugins apply asynchronously and ChatLuna starts its parts on `ready`: every task done.
    await app.lifecycle.flush()
    const outbox = new Outbox(app.bots[0])
    return { app, server, notes, outbox, dispose }
  } catch (error) {
    await dispose()
    throw error
  }
}

export type AgentApp = Awaited<ReturnType<typeof agentApp>>

