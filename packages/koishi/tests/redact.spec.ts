import { type CallInfo, defineTool, type ToolResult } from '@dogu/core'
import type { Context } from 'koishi'
import Schema from 'schemastery'
import { afterEach, describe, expect, it } from 'vitest'
import { koishiApp, loadPlugin, settle } from './koishi-app'

const ENV_SECRET = 'env-secret-7f3a9c1e'
const PLUGIN_SECRET = 'plugin-secret-2b8d4f6a'
const session = { id: 's1', userId: 'u1' }

afterEach(() => {
  delete process.env.DOGU_REDACT_TEST
})

const textArgs = Schema.object({ text: Schema.string().required() })

const leak = defineTool({
  name: 'leak',
  description: 'Echo a text everywhere',
  args: textArgs,
  traits: { effect: 'read' },
  run: ({ text }, call) => {
    call.progress(`working on ${text}`)
    return { text: `saw ${text}`, data: { value: text } }
  },
})

/** A Koishi plugin that defines `leak` and, through `ctx.tools.redact`, declares `values` its secrets. */
function holder(values: string[]) {
  return {
    name: 'holder',
    inject: ['tools'],
    apply(ctx: Context) {
      ctx.tools.redact(values)
      ctx.tools.define(leak)
    },
  }
}

describe('redact: a Koishi app', () => {
  it('replaces env values, pattern matches and a plugin\'s secrets in results and progress; a plugin\'s go with it', async () => {
    process.env.DOGU_REDACT_TEST = ENV_SECRET
    const { app } = await koishiApp({ dogu: { tools: { redact: { env: ['DOGU_REDACT_TEST'], patterns: ['tok_[0-9]{6}'] } } } })
    const seen: string[] = []
    app.on('tools/call-progress' as any, (_info: CallInfo, message: string) => { seen.push(`progress ${message}`) })
    app.on('tools/call-end' as any, (_info: CallInfo, result: ToolResult) => { seen.push(`end ${result.content}`) })
    const scope = loadPlugin(app, holder([PLUGIN_SECRET]))
    await settle(app)
    const text = `${ENV_SECRET} ${PLUGIN_SECRET} tok_123456`
    const [result] = await app.tools.execute([{ id: 'c1', name: 'leak', arguments: { text } }], { session })
    expect(result).toMatchObject({ status: 'ok', content: 'saw [redacted] [redacted] [redacted]', data: { value: '[redacted] [redacted] [redacted]' } })
    expect(seen).toEqual(['progress working on [redacted] [redacted] [redacted]', 'end saw [redacted] [redacted] [redacted]'])

    // The plugin's secret is disposed with it; the config's stay.
    scope.dispose()
    await settle(app)
    loadPlugin(app, { name: 'tools-only', inject: ['tools'], apply: (ctx: Context) => { ctx.tools.define(leak) } })
    await settle(app)
    const [after] = await app.tools.execute([{ id: 'c2', name: 'leak', arguments: { text } }], { session })
    expect(after.content).toBe(`saw [redacted] ${PLUGIN_SECRET} [redacted]`)
  })

  it('ignores a plugin\'s secrets with builtin: false', async () => {
    const { app } = await koishiApp({ dogu: { tools: { redact: { builtin: false } } } })
    loadPlugin(app, holder([PLUGIN_SECRET]))
    await settle(app)
    expect(app.tools.registry.redactor.active).toBe(false)
    const [result] = await app.tools.execute([{ id: 'c1', name: 'leak', arguments: { text: PLUGIN_SECRET } }], { session })
    expect(result.content).toBe(`saw ${PLUGIN_SECRET}`)
  })

  it('warns on Koishi\'s logger, naming the variable only, for an env name that is not set', async () => {
    const { app, guard } = await koishiApp({ dogu: { tools: { redact: { env: ['DOGU_REDACT_UNSET'] } } } })
    guard.expect('redact.env: DOGU_REDACT_UNSET is not set or is empty; nothing is redacted for it')
    expect(app.tools.registry.redactor.active).toBe(false)
  })
})
