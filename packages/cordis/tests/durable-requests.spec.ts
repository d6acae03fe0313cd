// Durable permission requests on Cordis (`permissions.durable`, docs/permissions.md): two
// apps, one after the other, on one data folder, as a restart of one process. A question open
// when the first stops reaches the second's askers (ctx.permissions.asker) and
// ctx.permissions.pending(); an answer there runs the call once, as a background task.
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type AskerContext, type BackgroundTask, type ClosedRequest, defineTool, type PermissionRequest, type Session, type ToolResult } from '@dogu/core'
import { Context, type Fiber } from 'cordis'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { DoguPlugin } from '../src'
import type { PermissionService } from '../src/permissions-service'

const alice: Session = { id: 'discord:room', userId: 'alice', platform: 'discord', channelId: 'room', authority: 1 }

let dir: string
const loaded: Fiber[] = []
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dogu-cordis-durable-'))
})
afterEach(async () => {
  vi.useRealTimers()
  for (const fiber of loaded.splice(0).reverse()) await fiber.dispose()
  await rm(dir, { recursive: true, force: true })
})

interface Shown {
  request: Readonly<PermissionRequest>
  context: AskerContext
}

/**
 * One start of the app: Dogu with its stores in `dir`, a `save` tool (a write: the default
 * rules ask) counting its runs, and an asker plugin that records what it is shown.
 */
async function start(permissions: PermissionService.Config = {}) {
  const ctx = new Context()
  const guard = guardLogs(ctx)
  const shown: Shown[] = []
  const settled: BackgroundTask[] = []
  const closed: ClosedRequest[] = []
  const runs: string[] = []
  ctx.on('background/settled', (task) => { settled.push(task) })
  ctx.on('permissions/closed', (request) => { closed.push(request) })
  const dogu = await ctx.plugin(DoguPlugin, {
    tools: {},
    permissions: { storePath: join(dir, 'permissions.json'), ...permissions },
    background: { storePath: join(dir, 'background.json') },
    audit: { storePath: join(dir, 'audit.jsonl') },
  })
  loaded.push(dogu)
  loaded.push(await ctx.plugin({
    name: 'notes',
    inject: ['tools'],
    apply(ctx: Context) {
      ctx.tools.define(defineTool({ name: 'save', description: 'Save a note', traits: { effect: 'write' }, run: ({ text }: { text: string }) => { runs.push(text); return `saved ${text}` } }))
    },
  }))
  loaded.push(await ctx.plugin({
    name: 'asker',
    inject: ['permissions'],
    apply(ctx: Context) {
      ctx.permissions.asker((request, context) => { shown.push({ request, context }) })
    },
  }))
  const save = (text: string): Promise<ToolResult> => ctx.tools.execute([{ id: `save-${text}`, name: 'save', arguments: { text } }], { session: alice }).then(([result]) => result)
  return { ctx, dogu, guard, shown, settled, closed, runs, save }
}

/** Stops the app as a restart would: its plugins disposed, its stores written. */
async function stop() {
  for (const fiber of loaded.splice(0).reverse()) await fiber.dispose()
}

async function until(done: () => boolean, what: string) {
  for (let i = 0; i < 2_000 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 1))
  if (!done()) throw new Error(`${what} did not happen`)
}

describe('durable requests on Cordis', () => {
  it('a question open when the app stops reaches the next start\'s askers and pending(); an answer there runs the call once, as a task of the caller\'s session', async () => {
    const first = await start()
    const waiting = first.save('hi')
    await until(() => first.shown.length === 1, 'the question')
    const asked = first.shown[0].request
    expect(asked.restored).toBeUndefined()
    expect(await first.shown[0].context.kept).toBe(true)
    await stop()
    expect(await waiting).toMatchObject({ status: 'denied', content: expect.stringContaining('interrupted while waiting for approval') })
    expect(first.runs).toEqual([])

    const second = await start()
    await until(() => second.shown.length === 1, 'the question asked again')
    const { request, context } = second.shown[0]
    // A new id, the first one kept; the first ask's times; the same call.
    expect(request.id).not.toBe(asked.id)
    expect(request.restored).toMatchObject({ originalId: asked.id })
    expect(request).toMatchObject({ tool: 'save', summary: asked.summary, args: { text: 'hi' }, createdAt: asked.createdAt, expiresAt: asked.expiresAt, session: { id: alice.id, userId: 'alice' } })
    expect(second.ctx.permissions.pending()).toEqual([request])
    // An answer to the old request is refused: its context belongs to the stopped engine.
    expect(first.shown[0].context.respond({ decision: 'allow', by: 'alice' })).toBe('closed')
    const result = await context.answer!({ decision: 'allow', by: { id: 'alice', platform: 'discord' } })
    expect(result).toMatchObject({ status: 'accepted', taskId: expect.any(String), open: false })
    await until(() => second.settled.length === 1, 'the task')
    expect(second.settled[0]).toMatchObject({ id: result.taskId, tool: 'save', status: 'succeeded', session: { id: alice.id }, result: { content: 'saved hi' } })
    expect(second.runs).toEqual(['hi'])
    expect(second.ctx.permissions.pending()).toEqual([])
    // Answered twice: the second finds it closed, and nothing runs again.
    expect((await context.answer!({ decision: 'allow', by: { id: 'alice', platform: 'discord' } })).status).toMatch(/closed|taken/)
    await stop()
    expect(second.runs).toEqual(['hi'])

    // Answered, it is gone from the file: a third start asks nothing.
    const third = await start()
    await third.ctx.permissions.engine.ready
    expect(third.ctx.permissions.pending()).toEqual([])
    expect(third.shown).toEqual([])
  })

  it('an expiry that passes while the app is down: the next start closes it (permissions/closed), asks nothing and runs nothing', async () => {
    const first = await start({ askTimeout: 60_000 })
    void first.save('late')
    await until(() => first.shown.length === 1, 'the question')
    await stop()
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 120_000 })
    const second = await start({ askTimeout: 60_000 })
    await until(() => second.closed.length === 1, 'the closure')
    expect(second.closed[0]).toMatchObject({ cause: 'expired', record: { tool: 'save', session: { channelId: 'room' } } })
    expect(second.shown).toEqual([])
    expect(second.ctx.permissions.pending()).toEqual([])
    expect(second.runs).toEqual([])
  })

  it('a deny rule added while the app was down wins over the old question: the answer is refused, saying why, and nothing runs', async () => {
    const first = await start()
    void first.save('secret plan')
    await until(() => first.shown.length === 1, 'the question')
    await stop()
    const second = await start({ rules: [{ permission: 'tool:save', decision: 'deny', name: 'no notes' }] })
    await until(() => second.shown.length === 1, 'the question asked again')
    const result = await second.shown[0].context.answer!({ decision: 'allow', by: { id: 'alice', platform: 'discord' } })
    expect(result).toMatchObject({ status: 'refused', open: false, reason: expect.stringContaining('denied now') })
    expect(result.reason).toContain('no notes')
    expect(second.ctx.permissions.pending()).toEqual([])
    expect(second.runs).toEqual([])
  })

  it('durable: false is today\'s behaviour: nothing is written, and the next start asks nothing', async () => {
    const first = await start({ durable: false })
    const waiting = first.save('hi')
    await until(() => first.shown.length === 1, 'the question')
    expect(first.shown[0].context.kept).toBeUndefined()
    await stop()
    // The asker plugin goes first (the app stops in reverse load order): the call ends at once, as today.
    expect(await waiting).toMatchObject({ status: 'denied', content: 'Permission denied: every asker showing the permission request was unloaded before anyone answered' })
    expect(existsSync(join(dir, 'pending.json'))).toBe(false)
    const second = await start({ durable: false })
    await second.ctx.permissions.engine.ready
    expect(second.shown).toEqual([])
    expect(second.ctx.permissions.pending()).toEqual([])
  })

  it('keeps the requests in pending.json beside the grants file, readable by the owner only', async () => {
    const first = await start()
    void first.save('hi')
    await until(() => first.shown.length === 1, 'the question')
    expect(await first.shown[0].context.kept).toBe(true)
    const stored = JSON.parse(await readFile(join(dir, 'pending.json'), 'utf8'))
    expect(stored).toMatchObject({ version: 1, requests: [{ id: first.shown[0].request.id, tool: 'save', args: { text: 'hi' } }] })
    const { stat } = await import('node:fs/promises')
    expect((await stat(join(dir, 'pending.json'))).mode & 0o077).toBe(0)
    expect(PermissionServiceConfig({}).durable).toBe(true)
    expect(() => PermissionServiceConfig({ durable: 'no' as never })).toThrow(/durable/)
  })
})

/** The permissions section of the Dogu plugin's config schema. */
function PermissionServiceConfig(config: PermissionService.Config): PermissionService.Config {
  return (DoguPlugin.Config({ permissions: config }) as { permissions: PermissionService.Config }).permissions
}
