import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type CallInfo, defineTool, type ToolResult } from '@dogu/core'
import { type Context, Schema } from 'koishi'
import { afterEach, describe, expect, it } from 'vitest'
import { chatlunaBridge, ChatLunaBridgeConfig } from '../src/chatluna-bridge'
import { type ChatApp, chatApp } from './chat-harness'
import { sessionOf } from './koishi-app'

// Koishi loads plugins through require: ChatLuna's ESM entry imports Koishi's, which does not load in Node.
const require = createRequire(import.meta.url)
const ChatLuna = require('koishi-plugin-chatluna')

let t: ChatApp | undefined
const dirs: string[] = []
afterEach(async () => {
  await t?.dispose()
  t = undefined
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

async function until(app: ChatApp['app'], done: () => boolean) {
  for (let round = 0; round < 50 && !done(); round++) {
    await app.lifecycle.flush()
    await new Promise((resolve) => setImmediate(resolve))
  }
  if (!done()) throw new Error('the app did not settle')
}

/**
 * ChatLuna, the bridge, and `lookup` (read, `q` required), with every call's result as the
 * pipeline ended it: ChatLuna's agents hand a tool's arguments over as text when they read
 * them as text (a ReAct step's `arguments`, a call written into the reply).
 */
async function setup(bridge: ChatLunaBridgeConfig = {}) {
  t = await chatApp()
  const { app } = t
  const dir = mkdtempSync(join(tmpdir(), 'dogu-chatluna-repair-'))
  dirs.push(dir)
  app.baseDir = dir
  app.plugin(ChatLuna, {})
  await until(app, () => !!app.get('chatluna'))
  const platform = (app as any).chatluna.platform
  const ran: string[] = []
  app.plugin({
    name: 'test-tools',
    inject: ['tools'],
    apply(ctx: Context) {
      ctx.tools.define(defineTool({
        name: 'lookup',
        description: 'Capital of a country',
        args: Schema.object({ q: Schema.string().required().description('Country') }),
        traits: { effect: 'read' },
        run: ({ q }: { q: string }) => {
          ran.push(q)
          return q === 'France' ? 'Paris' : `no capital known for ${q}`
        },
      }))
    },
  })
  const ended: ToolResult[] = []
  app.on('tools/call-end', (_: CallInfo, result: ToolResult) => { ended.push(result) })
  app.plugin({ name: 'dogu-chatluna', inject: ['tools', 'chatluna'], apply: chatlunaBridge }, ChatLunaBridgeConfig(bridge))
  await until(app, () => Object.keys(platform.getToolRegistry()).includes(bridge.mode === 'search' ? 'dogu_call' : 'lookup'))
  const alice = await sessionOf(app, 'alice', 'room')
  const tool = (name: string) => platform.getTool(name).createTool({})
  const invoke = (name: string, args: unknown) => tool(name).invoke(args, { configurable: { session: alice } })
  return { tool, invoke, alice, ran, ended }
}

const NOTE = (steps: string) => `Note: your arguments were not valid JSON; they were repaired (${steps}) before the call ran. Send strict JSON.\n\n`

describe('arguments ChatLuna hands the bridge as text', () => {
  it('reach Dogu\'s pipeline as the text itself: valid JSON runs as it is', async () => {
    const { invoke, ran, ended } = await setup()
    // LangChain's own check refuses a string against an object schema; the call still goes to Dogu, unparsed.
    expect(await invoke('lookup', '{"q": "France"}')).toBe('Paris')
    expect(ran).toEqual(['France'])
    expect(ended).toMatchObject([{ status: 'ok', content: 'Paris' }])
    expect(ended[0].repaired).toBeUndefined()
  })

  it('are repaired by the pipeline, which records what it changed', async () => {
    const { invoke, ran, ended } = await setup()
    expect(await invoke('lookup', '{\'q\': \'France\',}')).toBe(`${NOTE('quotes, trailing-comma')}Paris`)
    expect(await invoke('lookup', '{"q"："France"}')).toBe(`${NOTE('full-width')}Paris`)
    expect(ran).toEqual(['France', 'France'])
    expect(ended.map((result) => result.repaired)).toEqual([
      { from: '{\'q\': \'France\',}', steps: ['quotes', 'trailing-comma'] },
      { from: '{"q"："France"}', steps: ['full-width'] },
    ])
  })

  it('as a tool call\'s args, come back as a ToolMessage, repaired', async () => {
    const { tool, alice } = await setup()
    const message = await tool('lookup').invoke({ type: 'tool_call', id: 'call_1', name: 'lookup', args: '{"q": "France",}' }, { configurable: { session: alice } })
    expect(message.constructor.name).toBe('ToolMessage')
    expect({ content: message.content, id: message.tool_call_id }).toEqual({ content: `${NOTE('trailing-comma')}Paris`, id: 'call_1' })
  })

  it('that cannot be repaired without guessing are refused, and the tool does not run', async () => {
    const { invoke, ran, ended } = await setup()
    const text: string = await invoke('lookup', '{"q": "Fra')
    expect(text).toMatch(/^status: error\nArguments are not valid JSON \(.+\)\. .*They cannot be repaired without guessing: the string at position 6 is cut off/)
    expect(ran).toEqual([])
    expect(ended).toMatchObject([{ status: 'error', code: 'invalid_arguments' }])
  })

  describe('through dogu_call (search mode)', () => {
    it('read its own arguments from text, repaired, and pass the inner ones on as they came', async () => {
      const { invoke, ran, ended } = await setup({ mode: 'search' })
      expect(await invoke('dogu_call', '{"name": "lookup", "arguments": {"q": "France"}}')).toBe('Paris')
      // The proxy's text repaired: its record goes on the result.
      expect(await invoke('dogu_call', '{"name": "lookup", "arguments": {"q": "France"},}')).toBe('Paris')
      // The inner arguments as text: the pipeline repairs them, as any call's.
      expect(await invoke('dogu_call', { name: 'lookup', arguments: '{"q": "France",}' })).toBe(`${NOTE('trailing-comma')}Paris`)
      expect(ran).toEqual(['France', 'France', 'France'])
      expect(ended.map((result) => result.repaired)).toEqual([undefined, undefined, { from: '{"q": "France",}', steps: ['trailing-comma'] }])
    })

    it('refuse its own text when it cannot be repaired, naming what to send', async () => {
      const { invoke, ran } = await setup({ mode: 'search' })
      const text: string = await invoke('dogu_call', '{"name": "lookup", "arguments": {"q": "Fra')
      expect(text).toMatch(/^status: error\nArguments are not valid JSON \(.+\)\. Send a JSON object: \{ "name": …, "arguments": \{…\} \}\. They cannot be repaired without guessing: .+/)
      expect(ran).toEqual([])
    })
  })
})
