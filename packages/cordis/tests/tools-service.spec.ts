import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BackgroundEngine, type CallInfo, defineTool, DoguError, type PermissionGate, PermissionEngine, type ToolResult } from '@dogu/core'
import { Context, type Fiber } from 'cordis'
import Schema from 'schemastery'
import { afterEach, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import Dogu, { BackgroundService, DoguPlugin, PermissionService, ToolService } from '../src'

const session = { id: 's1', userId: 'u1' }

const echoArgs = Schema.object({
  text: Schema.string().required().description('What to repeat'),
  times: Schema.natural().min(1).max(3).default(1),
})
const echo = defineTool({
  name: 'echo',
  description: 'Repeat a text',
  args: echoArgs,
  traits: { effect: 'read' },
  run: ({ text, times }) => Array(times).fill(text).join(' '),
})

const textArgs = Schema.object({ text: Schema.string().required() })

/** A plugin that defines `tool` and counts its runs. */
function definer(name: string, tool = echo) {
  const counts = { apply: 0 }
  const plugin = {
    name,
    inject: ['tools'],
    apply(ctx: Context) {
      counts.apply++
      ctx.tools.define(tool)
    },
  }
  return { plugin, counts }
}

// Fibers still loaded when a test ends; disposed (awaited) after it, before any temp dir goes.
const loaded: Fiber[] = []
const dirs: string[] = []
afterEach(async () => {
  for (const fiber of loaded.splice(0).reverse()) await fiber.dispose()
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
})

/** A Cordis app with ToolService alone: no permission or background service. */
async function setup(config?: ToolService.Config) {
  const ctx = new Context()
  const guard = guardLogs(ctx)
  const changes: number[] = []
  const errors: unknown[] = []
  ctx.on('tools/changed', () => { changes.push(ctx.tools?.list().length ?? -1) })
  // What internal/error carried, for the tests that check which error it was.
  ctx.on('internal/error', (error) => { errors.push(error) })
  const service = await ctx.plugin(ToolService, config)
  loaded.push(service)
  return { ctx, service, changes, errors, guard }
}

describe('ToolService: provision', () => {
  it('provides ctx.tools, with the registry exposed and no permission or background service', async () => {
    const { ctx } = await setup()
    expect(ctx.tools).toBeInstanceOf(ToolService)
    expect(ctx.tools.list()).toEqual([])
    expect(ctx.tools.registry.permissions).toBeUndefined()
    expect(ctx.tools.registry.background).toBeUndefined()
    expect(ctx.get('permissions')).toBeUndefined()
    expect(ctx.get('background')).toBeUndefined()
  })

  it('is loaded with the permissions and background services by the default plugin, and goes with it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dogu-tools-service-'))
    dirs.push(dir)
    const ctx = new Context()
    guardLogs(ctx)
    const dogu = await ctx.plugin(Dogu, {
      permissions: { storePath: join(dir, 'permissions.json') },
      background: { storePath: join(dir, 'background.json') },
      audit: { storePath: join(dir, 'audit.jsonl') },
    })
    loaded.push(dogu)
    expect(DoguPlugin.name).toBe('dogu')
    expect(ctx.tools).toBeInstanceOf(ToolService)
    expect(ctx.permissions).toBeInstanceOf(PermissionService)
    expect(ctx.background).toBeInstanceOf(BackgroundService)
    const registry = ctx.tools.registry
    expect(registry.permissions).toBeInstanceOf(PermissionEngine)
    expect(registry.permissions).toBe(ctx.permissions.engine)
    expect(registry.background).toBeInstanceOf(BackgroundEngine)
    expect(registry.background).toBe(ctx.background.engine)
    expect(ctx.tools.list().map((tool) => tool.name)).toEqual(['task_cancel', 'task_status'])
    expect(registry.ownerOf('task_status')).toBe('plugin "BackgroundService"')

    await dogu.dispose()
    expect(ctx.get('tools')).toBeUndefined()
    expect(ctx.get('permissions')).toBeUndefined()
    expect(ctx.get('background')).toBeUndefined()
    expect(registry.permissions).toBeUndefined()
    expect(registry.background).toBeUndefined()
    expect(registry.list()).toEqual([])
  })

  it('can be loaded on its own as a named export', async () => {
    const ctx = new Context()
    guardLogs(ctx)
    loaded.push(await ctx.plugin(ToolService))
    const { plugin } = definer('alpha')
    await ctx.plugin(plugin)
    expect(ctx.tools.list().map((tool) => tool.name)).toEqual(['echo'])
  })

  it('applies its config: content beyond maxContentLength is cut with a marker', async () => {
    const { ctx } = await setup({ maxContentLength: 10 })
    ctx.tools.define(defineTool({ name: 'long', description: 'Long text', traits: { effect: 'read' }, run: () => '0123456789abcde' }))
    const [result] = await ctx.tools.execute([{ id: 'c1', name: 'long', arguments: '{}' }], { session })
    expect(result.content).toBe('0123456789\n…[truncated: 5 more characters]')
  })

  it('rejects an invalid config', async () => {
    const ctx = new Context()
    const guard = guardLogs(ctx)
    guard.expect('[app] ValidationError: $.maxContentLength expected number >= 1 but got -1')
    guard.expect('[app] ValidationError: $.tools.maxContentLength expected number >= 1 but got -1')
    await expect(ctx.plugin(ToolService, { maxContentLength: -1 })).rejects.toThrow(/maxContentLength/)
    expect(ctx.get('tools')).toBeUndefined()
    // The default plugin checks its tools section the same way, and then loads nothing.
    await expect(ctx.plugin(Dogu, { tools: { maxContentLength: -1 } })).rejects.toThrow(/maxContentLength/)
    expect(ctx.get('tools')).toBeUndefined()
    expect(ctx.get('permissions')).toBeUndefined()
    expect(ctx.get('background')).toBeUndefined()
  })
})

describe('ToolService: define', () => {
  it('lists, gets, filters and advertises a tool a plugin defined', async () => {
    const { ctx, changes } = await setup()
    const { plugin, counts } = definer('alpha')
    await ctx.plugin(plugin)
    expect(counts.apply).toBe(1)
    expect(changes).toEqual([1])
    expect(ctx.tools.get('echo')).toBe(echo)
    expect(ctx.tools.get('nope')).toBeUndefined()
    expect(ctx.tools.list()).toEqual([echo])
    expect(ctx.tools.filter({ include: ['ec*'] })).toEqual([echo])
    expect(ctx.tools.filter({ exclude: ['ec*'] })).toEqual([])
    expect(ctx.tools.registry.ownerOf('echo')).toBe('plugin "alpha"')
    const toolset = ctx.tools.toolset({ session })
    expect(toolset.names).toEqual(['echo'])
    expect(ctx.tools.toolset({ session, exclude: ['echo'] }).names).toEqual([])
  })

  it('registers each definition as a labelled effect of the calling plugin', async () => {
    const { ctx } = await setup()
    const { plugin } = definer('alpha')
    const fiber = await ctx.plugin(plugin)
    expect(fiber.getEffects().map((effect) => effect.label)).toEqual(['ctx.tools.define("echo")'])
  })

  it('hands out plain disposers, not Cordis\' thenable ones, and labels each effect by its method', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dogu-tools-service-'))
    dirs.push(dir)
    const ctx = new Context()
    guardLogs(ctx)
    loaded.push(await ctx.plugin(Dogu, { audit: { enabled: false }, background: { storePath: join(dir, 'tasks.json') }, permissions: { storePath: join(dir, 'grants.json') } }))
    const handles: (() => void)[] = []
    const fiber = await ctx.plugin({
      name: 'alpha',
      inject: ['tools', 'permissions'],
      apply(ctx: Context) {
        handles.push(
          ctx.tools.define(echo),
          ctx.tools.use((_call, next) => next(), { name: 'quiet' }),
          ctx.tools.redact(['a-long-secret-value']),
          ctx.tools.addSource({ name: 'docs', kind: 'mcp', status: 'connected', tools: [] } as never),
          ctx.permissions.rule({ permission: 'tool:echo', decision: 'allow' }),
          ctx.permissions.asker(() => undefined),
        )
      },
    })
    // A thenable handle would make `await dispose` wait for Cordis' disposal instead of nothing.
    expect(handles.map((dispose) => typeof dispose === 'function' && !('then' in dispose))).toEqual([true, true, true, true, true, true])
    expect(fiber.getEffects().map((effect) => effect.label)).toEqual([
      'ctx.tools.define("echo")', 'ctx.tools.use("quiet")', 'ctx.tools.redact()', 'ctx.tools.addSource()',
      'ctx.permissions.rule("tool:echo")', 'ctx.permissions.asker()',
    ])
    for (const dispose of handles) dispose()
    expect(fiber.getEffects()).toEqual([])
    expect(ctx.tools.list().map((tool) => tool.name)).toEqual(['task_cancel', 'task_status'])
  })

  it('gives definitions in each dialect, in the same order', async () => {
    const { ctx } = await setup()
    ctx.tools.define(defineTool({ name: 'zeta', description: 'Last', traits: { effect: 'read' }, run: () => 'z' }))
    await ctx.plugin(definer('alpha').plugin)
    const toolset = ctx.tools.toolset({ session })
    const json = toolset.definitions('json')
    expect(json.map((definition) => definition.name)).toEqual(['echo', 'zeta'])
    const text = { type: 'string', description: 'What to repeat' }
    expect(json[0]).toEqual({
      name: 'echo',
      description: 'Repeat a text',
      parameters: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: { text, times: { type: ['integer', 'null'], minimum: 1, maximum: 3, default: 1 } },
        required: ['text'],
      },
    })
    expect(toolset.definitions('openai')[0]).toEqual({
      type: 'function',
      function: {
        name: 'echo',
        description: 'Repeat a text',
        parameters: {
          type: 'object',
          properties: { text, times: { type: ['integer', 'null'], minimum: 1, maximum: 3 } },
          required: ['text', 'times'],
          additionalProperties: false,
        },
        strict: true,
      },
    })
    expect(toolset.definitions('anthropic')[0]).toEqual({
      name: 'echo',
      description: 'Repeat a text',
      input_schema: {
        type: 'object',
        properties: { text, times: { type: 'integer', minimum: 1, maximum: 3, default: 1 } },
        required: ['text'],
      },
    })
    expect(toolset.definitions('gemini')[0]).toEqual({
      name: 'echo',
      description: 'Repeat a text',
      parameters: {
        type: 'object',
        properties: { text, times: { type: 'integer', minimum: 1, maximum: 3 } },
        required: ['text'],
        propertyOrdering: ['text', 'times'],
      },
    })
    for (const dialect of ['openai', 'anthropic', 'gemini'] as const) {
      expect(toolset.definitions(dialect)).toHaveLength(2)
    }
    // Cached while the registry is unchanged.
    expect(toolset.definitions('openai')).toBe(toolset.definitions('openai'))
  })

  it('executes calls through a toolset and through the shortcut', async () => {
    const { ctx } = await setup()
    await ctx.plugin(definer('alpha').plugin)
    const results = await ctx.tools.toolset({ session }).execute([
      { id: 'c1', name: 'echo', arguments: '{"text":"hi","times":2}' },
      { id: 'c2', name: 'echo', arguments: { text: 'yo' } },
      { id: 'c3', name: 'ecko', arguments: '{}' },
    ])
    expect(results.map(({ durationMs, ...rest }) => rest)).toEqual([
      { id: 'c1', name: 'echo', status: 'ok', content: 'hi hi' },
      { id: 'c2', name: 'echo', status: 'ok', content: 'yo' },
      { id: 'c3', name: 'ecko', status: 'error', code: 'unknown_tool', content: 'Unknown tool "ecko". Did you mean "echo"? Available tools: echo.', params: { name: 'ecko', suggestions: ['echo'], available: ['echo'], more: false } },
    ])
    const [shortcut] = await ctx.tools.execute([{ id: 'c4', name: 'echo', arguments: '{"text":"x"}' }], { session })
    expect(shortcut).toMatchObject({ id: 'c4', status: 'ok', content: 'x' })
  })

  it('removes the tool when the defining plugin is disposed', async () => {
    const { ctx, changes } = await setup()
    const fiber = await ctx.plugin(definer('alpha').plugin)
    const toolset = ctx.tools.toolset({ session })
    await fiber.dispose()
    expect(ctx.tools.list()).toEqual([])
    expect(changes).toEqual([1, 0])
    expect(fiber.getEffects()).toEqual([])
    // A toolset made before keeps its snapshot, but the unloaded tool no longer runs.
    const [result] = await toolset.execute([{ id: 'c1', name: 'echo', arguments: '{"text":"x"}' }])
    expect(result).toMatchObject({ status: 'cancelled', code: 'cancelled', content: 'Cancelled: tool "echo" was unloaded.' })
  })

  it('redefines the tool exactly once when the plugin reloads', async () => {
    const { ctx, changes } = await setup()
    const { plugin, counts } = definer('alpha')
    const fiber = await ctx.plugin(plugin)
    await fiber.restart()
    expect(counts.apply).toBe(2)
    expect(changes).toEqual([1, 0, 1])
    expect(ctx.tools.list()).toEqual([echo])
    expect(fiber.getEffects().map((effect) => effect.label)).toEqual(['ctx.tools.define("echo")'])
  })

  it('redefines the tool from the new config when the plugin config changes', async () => {
    const { ctx, changes } = await setup()
    const plugin = {
      name: 'greeter',
      inject: ['tools'],
      Config: Schema.object({ greeting: Schema.string().default('hello') }),
      apply(ctx: Context, config: { greeting: string }) {
        ctx.tools.define(defineTool({ name: 'greet', description: 'Greet', traits: { effect: 'read' }, run: () => config.greeting }))
      },
    }
    const fiber = await ctx.plugin(plugin)
    const run = async () => (await ctx.tools.execute([{ id: 'c1', name: 'greet' }], { session }))[0].content
    expect(await run()).toBe('hello')
    fiber.update({ greeting: 'bonjour' })
    await fiber.await()
    expect(await run()).toBe('bonjour')
    expect(changes).toEqual([1, 0, 1])
  })

  it('makes a second dispose harmless', async () => {
    const { ctx, changes } = await setup()
    let dispose!: () => void
    const fiber = await ctx.plugin({
      name: 'alpha',
      inject: ['tools'],
      apply(ctx: Context) {
        dispose = ctx.tools.define(echo)
      },
    })
    dispose()
    dispose()
    expect(ctx.tools.list()).toEqual([])
    expect(changes).toEqual([1, 0])
    expect(fiber.getEffects()).toEqual([])
    await fiber.dispose()
    dispose()
    expect(changes).toEqual([1, 0])
  })

  it('replaces a tool the same plugin redefines', async () => {
    const { ctx, changes } = await setup()
    const other = defineTool({
      name: 'echo',
      description: 'Repeat a text, louder',
      args: textArgs,
      traits: { effect: 'read' },
      run: ({ text }) => text.toUpperCase(),
    })
    await ctx.plugin({
      name: 'alpha',
      inject: ['tools'],
      apply(ctx: Context) {
        ctx.tools.define(echo)
        ctx.tools.define(other)
      },
    })
    expect(ctx.tools.get('echo')).toBe(other)
    expect(changes).toEqual([1, 1])
    const [result] = await ctx.tools.execute([{ id: 'c1', name: 'echo', arguments: '{"text":"hi"}' }], { session })
    expect(result.content).toBe('HI')
  })

  it('refuses a name another live plugin holds, naming both plugins', async () => {
    const { ctx, changes, errors, guard } = await setup()
    await ctx.plugin(definer('alpha').plugin)
    guard.expect('[beta] DoguError: tool "echo" is already defined by plugin "alpha"; plugin "beta" cannot define it too')
    const beta = ctx.plugin(definer('beta').plugin)
    let error: unknown
    await beta.then(undefined, (reason) => { error = reason })
    expect(DoguError.is(error, 'NAME_CONFLICT')).toBe(true)
    expect((error as DoguError).message).toBe('tool "echo" is already defined by plugin "alpha"; plugin "beta" cannot define it too')
    expect(errors).toEqual([error])
    expect(ctx.tools.registry.ownerOf('echo')).toBe('plugin "alpha"')
    expect(beta.getEffects()).toEqual([])
    expect(changes).toEqual([1])
  })

  it('throws NAME_CONFLICT at the call site, and lets the name go once its owner is gone', async () => {
    const { ctx } = await setup()
    const alpha = await ctx.plugin(definer('alpha').plugin)
    expect(() => ctx.tools.define(echo)).toThrow(DoguError)
    try {
      ctx.tools.define(echo)
    } catch (error) {
      expect(error).toMatchObject({ code: 'NAME_CONFLICT', message: 'tool "echo" is already defined by plugin "alpha"; plugin "root" cannot define it too' })
    }
    expect(ctx.fiber.getEffects().map((effect) => effect.label)).not.toContain('ctx.tools.define("echo")')
    await alpha.dispose()
    ctx.tools.define(echo)
    expect(ctx.tools.registry.ownerOf('echo')).toBe('plugin "root"')
  })

  it('refuses a definition from a plugin that is already disposed', async () => {
    const { ctx } = await setup()
    let tools!: ToolService
    const fiber = await ctx.plugin({ name: 'stale', inject: ['tools'], apply: (ctx: Context) => { tools = ctx.tools } })
    await fiber.dispose()
    expect(() => tools.define(echo)).toThrow(expect.objectContaining({
      code: 'INACTIVE',
      message: 'plugin "stale" is no longer active; it cannot define tool "echo"',
    }))
    expect(ctx.tools.list()).toEqual([])
  })

  it('passes a bad definition through as a coded error', async () => {
    const { ctx } = await setup()
    expect(() => ctx.tools.define({ name: 'bad name', description: 'x', run: () => '' })).toThrow(expect.objectContaining({ code: 'INVALID_NAME' }))
    expect(ctx.tools.list()).toEqual([])
  })
})

describe('ToolService: events', () => {
  it('forwards call-start, call-progress and call-end to ctx.emit', async () => {
    const { ctx } = await setup()
    const log: string[] = []
    ctx.on('tools/call-start', (info: CallInfo) => { log.push(`start ${info.id} ${info.name} ${info.session.id}`) })
    ctx.on('tools/call-progress', (info: CallInfo, message: string) => { log.push(`progress ${info.id} ${message}`) })
    ctx.on('tools/call-end', (info: CallInfo, result: ToolResult) => { log.push(`end ${info.id} ${result.status} ${result.content}`) })
    ctx.tools.define(defineTool({
      name: 'steps',
      description: 'Counts to two',
      traits: { effect: 'read' },
      run: (_, call) => {
        call.progress('one')
        call.progress('two')
        return 'done'
      },
    }))
    await ctx.tools.execute([{ id: 'c1', name: 'steps', arguments: '{}' }, { id: 'c2', name: 'nope' }], { session })
    expect(log).toEqual([
      // A synchronous tool finishes before the next call is even resolved.
      'start c1 steps s1',
      'progress c1 one',
      'progress c1 two',
      'end c1 ok done',
      'start c2 nope s1',
      'end c2 error Unknown tool "nope". Available tools: steps.',
    ])
  })

  it('keeps a call working when a listener throws, reporting the error to Cordis', async () => {
    const { ctx, errors, guard } = await setup()
    const boom = new Error('listener broke')
    guard.expect('[ToolService] Error: listener broke')
    ctx.on('tools/call-end', () => { throw boom })
    await ctx.plugin(definer('alpha').plugin)
    const [result] = await ctx.tools.execute([{ id: 'c1', name: 'echo', arguments: '{"text":"x"}' }], { session })
    expect(result).toMatchObject({ status: 'ok', content: 'x' })
    expect(errors).toEqual([boom])
  })
})

describe('ToolService: permissions seam', () => {
  const write = defineTool({
    name: 'save',
    description: 'Save a text',
    args: textArgs,
    traits: { effect: 'write' },
    run: ({ text }) => `saved ${text}`,
  })

  it('fails closed without a permissions service, and follows a gate once one is set', async () => {
    const { ctx } = await setup()
    ctx.tools.define(write)
    const call = { id: 'c1', name: 'save', arguments: '{"text":"a"}' }
    const [denied] = await ctx.tools.execute([call], { session })
    expect(denied).toMatchObject({
      status: 'denied',
      code: 'no_permission_service',
      content: 'Permission denied: no permission service is loaded, so only read-only tools may run ("save" has effect "write").',
    })
    const asked: string[] = []
    const gate: PermissionGate = {
      authorize: (request) => {
        asked.push(`${request.permission.name} ${request.effect}`)
        return { decision: 'allow' }
      },
      approve: async () => ({ decision: 'deny' }),
    }
    ctx.tools.registry.permissions = gate
    const [allowed] = await ctx.tools.execute([call], { session })
    expect(allowed).toMatchObject({ status: 'ok', content: 'saved a' })
    expect(asked).toEqual(['tool:save write'])
  })
})

describe('ToolService: disposal', () => {
  it('aborts calls in flight when the service stops, and withdraws ctx.tools', async () => {
    const { ctx, service } = await setup()
    let started!: () => void
    const running = new Promise<void>((resolve) => { started = resolve })
    const seen: string[] = []
    await ctx.plugin({
      name: 'waiter',
      inject: ['tools'],
      apply(ctx: Context) {
        ctx.tools.define(defineTool({
          name: 'wait',
          description: 'Waits until aborted',
          traits: { effect: 'read' },
          run: (_, call) => new Promise((_, reject) => {
            call.signal.addEventListener('abort', () => {
              seen.push(`abort ${call.signal.reason.name}`)
              reject(call.signal.reason)
            })
            call.progress('waiting')
            started()
          }),
        }))
      },
    })
    const pending = ctx.tools.execute([{ id: 'c1', name: 'wait' }], { session })
    await running
    await service.dispose()
    const [result] = await pending
    expect(result).toMatchObject({
      id: 'c1',
      status: 'cancelled',
      code: 'cancelled',
      content: 'Cancelled: the tool service stopped. Last progress: waiting',
    })
    expect(seen).toEqual(['abort AbortError'])
    expect(ctx.get('tools')).toBeUndefined()
    await service.dispose()
    expect(ctx.get('tools')).toBeUndefined()
  })
})
