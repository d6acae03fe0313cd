import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defineTool, type Session } from '@dogu/core'
import { Context, type Fiber } from 'cordis'
import Schema from 'schemastery'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { AuditService, DoguPlugin } from '../src'
import { eventEmitter, tapEvent } from '../src/cordis-events'

const user: Session = { id: 's1', userId: 'u1', platform: 'discord', authority: 1 }

let dir: string
const loaded: Fiber[] = []
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'dogu-audit-')) })
afterEach(async () => {
  for (const fiber of loaded.splice(0).reverse()) await fiber.dispose()
  await rm(dir, { recursive: true, force: true })
})

/** The app as users load it: the Dogu plugin, then a plugin with two tools. */
async function app(audit: DoguPlugin.Config['audit'] = {}) {
  const ctx = new Context()
  const guard = guardLogs(ctx)
  const dogu = await ctx.plugin(DoguPlugin, {
    permissions: { storePath: join(dir, 'permissions.json'), rules: [{ permission: 'tool:deploy', decision: 'allow', name: 'deploys ok' }] },
    background: { storePath: join(dir, 'tasks.json') },
    audit: { storePath: join(dir, 'audit.jsonl'), ...audit },
  })
  loaded.push(dogu)
  loaded.push(await ctx.plugin({
    name: 'ops',
    inject: ['tools'],
    apply(ctx: Context) {
      ctx.tools.define(defineTool({ name: 'deploy', description: 'Deploy', args: Schema.object({ env: Schema.string() }), traits: { effect: 'exec' }, run: () => 'deployed' }))
      ctx.tools.define(defineTool({ name: 'wipe', description: 'Wipe', traits: { effect: 'exec' }, run: () => 'wiped' }))
    },
  }))
  const call = async (name: string, args: Record<string, unknown> = {}) => (await ctx.tools.execute([{ id: `c-${name}`, name, arguments: args }], { session: user }))[0]
  return { ctx, dogu, call, guard }
}

describe('AuditService in the default plugin', () => {
  it('is ctx.audit, takes its config section, and records calls through the real pipeline', async () => {
    expect(DoguPlugin.Config({}).audit).toMatchObject({ enabled: true, hashArguments: false, maxRecords: 10_000, maxAgeMs: 30 * 24 * 3600_000 })
    expect(() => DoguPlugin.Config({ audit: { maxRecords: 0 } })).toThrow()
    const { ctx, call } = await app()
    expect(ctx.audit).toBeInstanceOf(AuditService)
    expect(ctx.audit.enabled).toBe(true)
    await call('deploy', { env: 'prod' })
    await call('wipe')
    const [wipe, deploy] = await ctx.audit.query()
    expect(deploy).toMatchObject({ tool: 'deploy', args: { env: 'prod' }, outcome: 'ok', caller: { userId: 'u1', sessionId: 's1' }, decided: { kind: 'rule', origin: 'config.rules[0]', name: 'deploys ok' } })
    // Nobody registered an asker: the exec default asks, and nobody can be asked.
    expect(wipe).toMatchObject({ tool: 'wipe', outcome: 'denied', decided: { kind: 'default', effect: 'exec' }, ask: { ended: 'no-asker' } })
    expect(await ctx.audit.query({ outcome: 'denied' })).toEqual([wipe])
  })

  it('records how a call that moved to the background ended, as a second record with the task', async () => {
    const { ctx } = await app()
    let finish!: () => void
    loaded.push(await ctx.plugin({
      name: 'slow',
      inject: ['tools'],
      apply(ctx: Context) {
        ctx.tools.define(defineTool({
          name: 'build',
          description: 'A long build',
          traits: { effect: 'read', timeout: 50, background: true },
          run: () => new Promise<string>((resolve) => { finish = () => resolve('built') }),
        }))
      },
    }))
    const [moved] = await ctx.tools.execute([{ id: 'c-build', name: 'build' }], { session: user })
    expect(moved, moved.content).toMatchObject({ status: 'background' })
    const settled = new Promise<void>((resolve) => ctx.on('background/settled', () => resolve()))
    finish()
    await settled
    const [end, start] = await ctx.audit.query({ tool: 'build' })
    expect(start).toMatchObject({ callId: 'c-build', outcome: 'background', taskId: moved.taskId })
    expect(start.taskStatus).toBeUndefined()
    expect(end).toMatchObject({ callId: 'c-build', outcome: 'ok', taskId: moved.taskId, taskStatus: 'succeeded', caller: { userId: 'u1' } })
  })

  it('keeps records across a restart of the app: stopping writes them, a new app reads them', async () => {
    const first = await app({ hashArguments: ['deploy'] })
    await first.call('deploy', { env: 'prod' })
    await first.ctx.plugin({ name: 'asker', inject: ['permissions'], apply: (ctx: Context) => { ctx.permissions.asker(() => ({ decision: 'allow', by: 'u1', via: 'text' })) } })
    await first.call('wipe')
    // Nothing is written before the batch's timer or the stop.
    await loaded.splice(0).reverse().reduce((done, fiber) => done.then(() => fiber.dispose()), Promise.resolve())
    const lines = (await readFile(join(dir, 'audit.jsonl'), 'utf8')).trim().split('\n')
    expect(lines).toHaveLength(2)
    const second = await app()
    const [wipe, deploy] = await second.ctx.audit.query()
    expect(deploy.argsHash).toMatch(/^sha256:/)
    expect(deploy.args).toBeUndefined()
    expect(wipe).toMatchObject({ outcome: 'ok', ask: { ended: 'answer', by: { id: 'u1' }, via: 'text', scope: 'once' } })
    expect(wipe.waitMs).toBeGreaterThanOrEqual(0)
  })

  it('records the calls the app cancels as it stops', async () => {
    const { ctx } = await app()
    await ctx.plugin({
      name: 'slow',
      inject: ['tools'],
      apply: (ctx: Context) => { ctx.tools.define(defineTool({ name: 'slow', description: 'Slow', traits: { effect: 'read' }, run: (_, call) => new Promise((resolve) => call.signal.addEventListener('abort', () => resolve('stopped'))) })) },
    })
    const running = ctx.tools.execute([{ id: 'c-slow', name: 'slow', arguments: {} }], { session: user })
    await new Promise((resolve) => setTimeout(resolve, 5))
    await loaded.splice(0).reverse().reduce((done, fiber) => done.then(() => fiber.dispose()), Promise.resolve())
    expect((await running)[0].status).toBe('cancelled')
    const records = (await readFile(join(dir, 'audit.jsonl'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line))
    expect(records).toMatchObject([{ tool: 'slow', outcome: 'cancelled' }])
  })

  it('taps an event past Cordis\' dispatch, beside ctx.on listeners, until removed', async () => {
    const ctx = new Context()
    guardLogs(ctx)
    const emit = eventEmitter(ctx)
    const seen: string[] = []
    expect(emit.listens('tools/call-end')).toBe(false)
    const untap = tapEvent(ctx, 'tools/call-end', (info: { id: string }) => { seen.push(`tap ${info.id}`) })
    const again = tapEvent(ctx, 'tools/call-end', (info: { id: string }) => { seen.push(`again ${info.id}`) })
    expect(emit.listens('tools/call-end')).toBe(true)
    emit('tools/call-end', { id: 'a' })
    ctx.on('tools/call-end', (info) => { seen.push(`on ${info.id}`) })
    untap()
    untap()
    emit('tools/call-end', { id: 'b' })
    again()
    emit('tools/call-end', { id: 'c' })
    expect(seen).toEqual(['tap a', 'again a', 'again b', 'on b', 'on c'])
  })

  it('keeps nothing when disabled, and ctx.audit still answers', async () => {
    const { ctx, call } = await app({ enabled: false })
    await call('deploy')
    expect(ctx.audit.enabled).toBe(false)
    expect(await ctx.audit.query()).toEqual([])
    await ctx.audit.flush()
  })
})
