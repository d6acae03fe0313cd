import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type CallInfo, defineTool, DoguError, type ToolResult } from '@dogu/core'
import { Context, type Fiber } from 'cordis'
import Schema from 'schemastery'
import { afterEach, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import Dogu, { ToolService } from '../src'

const session = { id: 's1', userId: 'u1' }
const ENV_SECRET = 'env-secret-7f3a9c1e'
const PLUGIN_SECRET = 'plugin-secret-2b8d4f6a'
const PATTERN_SECRET = 'tok_123456'

/** A read-only tool that shows the text it is given in its content, progress, data and artifacts. */
const textArgs = Schema.object({ text: Schema.string().required() })

const leak = defineTool({
  name: 'leak',
  description: 'Echo a text everywhere',
  args: textArgs,
  traits: { effect: 'read' },
  run: ({ text }, call) => {
    call.progress(`working on ${text}`)
    return { text: `saw ${text}`, data: { nested: [{ value: text }] }, artifacts: [{ kind: 'note', body: text }] }
  },
})

const slowLeak = defineTool({
  name: 'slow_leak',
  description: 'Echo a text, then hang past its timeout',
  args: textArgs,
  traits: { effect: 'read', timeout: 50 },
  run: ({ text }, call) => {
    call.progress(`started with ${text}`)
    return new Promise<string>((resolve) => call.signal.addEventListener('abort', () => resolve(text)))
  },
})

/** A plugin that declares `values` its own secrets and defines the tools. */
function holder(name: string, values: string[]) {
  return {
    name,
    inject: ['tools'],
    apply(ctx: Context) {
      ctx.tools.redact(values)
      ctx.tools.define(leak)
      ctx.tools.define(slowLeak)
    },
  }
}

const loaded: Fiber[] = []
const dirs: string[] = []
afterEach(async () => {
  for (const fiber of loaded.splice(0).reverse()) await fiber.dispose()
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
  delete process.env.DOGU_REDACT_TEST
})

/** A Cordis 4 app with all of Dogu (stores in a temp dir), recording the events a console or log would read. */
async function app(redact: ToolService.Config['redact']) {
  const dir = await mkdtemp(join(tmpdir(), 'dogu-redact-'))
  dirs.push(dir)
  const ctx = new Context()
  const guard = guardLogs(ctx)
  const seen: string[] = []
  ctx.on('tools/call-progress', (_info: CallInfo, message: string) => { seen.push(`progress ${message}`) })
  ctx.on('tools/call-end', (_info: CallInfo, result: ToolResult) => { seen.push(`end ${JSON.stringify(result)}`) })
  loaded.push(await ctx.plugin(Dogu, {
    tools: { redact },
    audit: { storePath: join(dir, 'audit.jsonl') },
    permissions: { storePath: join(dir, 'permissions.json') },
    background: { storePath: join(dir, 'background.json') },
  }))
  return { ctx, guard, seen }
}

const run = async (ctx: Context, text: string, name = 'leak') => (await ctx.tools.execute([{ id: 'c1', name, arguments: { text } }], { session }))[0]

describe('redact: a Cordis 4 app', () => {
  it('replaces env values, pattern matches and a plugin\'s secrets in the result, its progress and its call-end event', async () => {
    process.env.DOGU_REDACT_TEST = ENV_SECRET
    const { ctx, seen } = await app({ env: ['DOGU_REDACT_TEST'], patterns: ['tok_[0-9]{6}'] })
    loaded.push(await ctx.plugin(holder('holder', [PLUGIN_SECRET])))
    const text = `${ENV_SECRET} ${PLUGIN_SECRET} ${PATTERN_SECRET}`
    const result = await run(ctx, text)
    expect(result).toMatchObject({
      status: 'ok',
      content: 'saw [redacted] [redacted] [redacted]',
      data: { nested: [{ value: '[redacted] [redacted] [redacted]' }] },
      artifacts: [{ kind: 'note', body: '[redacted] [redacted] [redacted]' }],
    })
    expect(seen.join('\n')).not.toMatch(/env-secret|plugin-secret|tok_1/)
    expect(seen[0]).toBe('progress working on [redacted] [redacted] [redacted]')
    expect(seen).toHaveLength(2)
  })

  it('redacts a timed-out call\'s result and progress', async () => {
    // ToolService alone: with the background service a timeout would move the call there.
    const ctx = new Context()
    guardLogs(ctx)
    const seen: string[] = []
    ctx.on('tools/call-progress', (_info: CallInfo, message: string) => { seen.push(`progress ${message}`) })
    ctx.on('tools/call-end', (_info: CallInfo, result: ToolResult) => { seen.push(`end ${JSON.stringify(result)}`) })
    loaded.push(await ctx.plugin(ToolService))
    loaded.push(await ctx.plugin(holder('holder', [PLUGIN_SECRET])))
    const result = await run(ctx, PLUGIN_SECRET, 'slow_leak')
    expect(result.status).toBe('timed_out')
    expect(JSON.stringify(result)).not.toContain(PLUGIN_SECRET)
    expect(seen.join('\n')).not.toContain(PLUGIN_SECRET)
    expect(seen[0]).toBe('progress started with [redacted]')
  })

  it('redacts a background task\'s result and what the model reads of it', async () => {
    const { ctx, seen } = await app({})
    let finish!: () => void
    loaded.push(await ctx.plugin({
      name: 'slow-holder',
      inject: ['tools'],
      apply(ctx: Context) {
        ctx.tools.redact([PLUGIN_SECRET])
        ctx.tools.define(defineTool({
          name: 'slow',
          description: 'Moves to the background, then shows a secret',
          args: Schema.object({}),
          traits: { effect: 'read', timeout: 1, background: true },
          run: (_args, call) => new Promise<string>((resolve) => {
            call.progress(`progress ${PLUGIN_SECRET}`)
            finish = () => resolve(`done: ${PLUGIN_SECRET}`)
          }),
        }))
      },
    }))
    const [moved] = await ctx.tools.execute([{ id: 'c1', name: 'slow', arguments: {} }], { session })
    expect(moved.status).toBe('background')
    finish()
    const task = await ctx.background.wait(moved.taskId!, { timeout: 10_000 })
    expect(task).toMatchObject({ status: 'succeeded', result: { content: 'done: [redacted]' } })
    const [status] = await ctx.tools.execute([{ id: 'c2', name: 'task_status', arguments: { id: moved.taskId } }], { session })
    expect(status.content).toContain('done: [redacted]')
    expect(JSON.stringify(status)).not.toContain(PLUGIN_SECRET)
    expect(seen.join('\n')).not.toContain(PLUGIN_SECRET)
  })

  it('leaves no part of a secret that crosses the maxContentLength cut', async () => {
    const { ctx } = await app({})
    // The default maxContentLength is 50 000: the secret starts 5 characters before the cut.
    loaded.push(await ctx.plugin({
      name: 'long-holder',
      inject: ['tools'],
      apply(ctx: Context) {
        ctx.tools.redact([PLUGIN_SECRET])
        ctx.tools.define(defineTool({ name: 'long', description: 'A long text', args: Schema.object({}), traits: { effect: 'read' }, run: () => `${'x'.repeat(49_995)}${PLUGIN_SECRET} tail` }))
      },
    }))
    const [result] = await ctx.tools.execute([{ id: 'c1', name: 'long', arguments: {} }], { session })
    expect(result.content).not.toContain(PLUGIN_SECRET.slice(0, 5))
    // Redacted before the cut: what follows the x's is the start of `[redacted]`, however it is cut.
    expect(result.content.slice(49_995, 49_996)).toBe('[')
  })

  it('keeps a plugin\'s secret while any holder is loaded, and drops it when the last one goes', async () => {
    const { ctx } = await app({})
    const first = await ctx.plugin(holder('first', [PLUGIN_SECRET]))
    const second = await ctx.plugin({ name: 'second', inject: ['tools'], apply: (ctx: Context) => { ctx.tools.redact([PLUGIN_SECRET]) } })
    loaded.push(second)
    expect((await run(ctx, PLUGIN_SECRET)).content).toBe('saw [redacted]')
    // The tools go with `first`; a second plugin defines them again.
    await first.dispose()
    loaded.push(await ctx.plugin({ name: 'tools-only', inject: ['tools'], apply: (ctx: Context) => { ctx.tools.define(leak) } }))
    expect((await run(ctx, PLUGIN_SECRET)).content).toBe('saw [redacted]')
    await second.dispose()
    expect((await run(ctx, PLUGIN_SECRET)).content).toBe(`saw ${PLUGIN_SECRET}`)
    expect(ctx.tools.registry.redactor.active).toBe(false)
  })

  it('ignores the secrets plugins declare with builtin: false; env and patterns still apply', async () => {
    process.env.DOGU_REDACT_TEST = ENV_SECRET
    const { ctx } = await app({ env: ['DOGU_REDACT_TEST'], builtin: false })
    loaded.push(await ctx.plugin(holder('holder', [PLUGIN_SECRET])))
    expect((await run(ctx, `${ENV_SECRET} ${PLUGIN_SECRET}`)).content).toBe(`saw [redacted] ${PLUGIN_SECRET}`)
  })

  it('leaves results alone with nothing to redact', async () => {
    const { ctx } = await app(undefined)
    loaded.push(await ctx.plugin(holder('holder', [])))
    expect(ctx.tools.registry.redactor.active).toBe(false)
    expect((await run(ctx, PLUGIN_SECRET)).content).toBe(`saw ${PLUGIN_SECRET}`)
  })

  it('warns, naming the variable only, for an env name that is not set', async () => {
    const ctx = new Context()
    const guard = guardLogs(ctx)
    guard.expect('redact.env: DOGU_REDACT_UNSET is not set or is empty; nothing is redacted for it')
    loaded.push(await ctx.plugin(ToolService, { redact: { env: ['DOGU_REDACT_UNSET'] } }))
    expect(ctx.tools.registry.redactor.active).toBe(false)
  })

  it('refuses a pattern the linear-time engine cannot run: the service does not load, with an error naming the pattern', async () => {
    const ctx = new Context()
    const guard = guardLogs(ctx)
    const errors: unknown[] = []
    ctx.on('internal/error', (error) => { errors.push(error) })
    const message = 'redact.patterns[0] "(?<=Bearer )\\\\w+" uses lookaround ((?<=), which the linear-time engine (RE2) cannot run: it has no backreferences, no lookaround and no repetition counts over 1000'
    guard.expect(message)
    await expect(ctx.plugin(ToolService, { redact: { patterns: ['(?<=Bearer )\\w+'] } })).rejects.toThrow(message)
    expect(ctx.get('tools')).toBeUndefined()
    expect(errors).toHaveLength(1)
    expect(DoguError.is(errors[0], 'INVALID_OPTIONS')).toBe(true)
  })
})
