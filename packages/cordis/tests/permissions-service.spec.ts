import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type DecisionEvent, defineTool, PermissionError, type Session } from '@dogu/core'
import { Context, type Fiber } from 'cordis'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { ToolService } from '../src'
// Imported from its file: the default plugin's index lists it once the lead wires it in.
import { PermissionService } from '../src/permissions-service'

const user: Session = { id: 's1', userId: 'u1', platform: 'discord', authority: 1 }

let dir: string
// Fibers of the apps a test made, disposed after it: stopping the service awaits its grant
// store, so no write is in flight when the dir is removed.
const loaded: Fiber[] = []
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dogu-permissions-'))
})
afterEach(async () => {
  for (const fiber of loaded.splice(0).reverse()) await fiber.dispose()
  await rm(dir, { recursive: true, force: true })
})

async function setup(config: PermissionService.Config = {}) {
  const ctx = new Context()
  const guard = guardLogs(ctx)
  const errors: unknown[] = []
  const warnings: unknown[][] = []
  const decisions: DecisionEvent[] = []
  ctx.on('internal/error', (error) => { errors.push(error) })
  ctx.on('internal/warn', (...args: unknown[]) => { warnings.push(args) })
  ctx.on('permissions/decision', (event) => { decisions.push(event) })
  loaded.push(await ctx.plugin(ToolService))
  const fiber = await ctx.plugin(PermissionService, { storePath: join(dir, 'permissions.json'), ...config })
  loaded.push(fiber)
  ctx.tools.define(defineTool({ name: 'write', description: 'Write', traits: { effect: 'write' }, run: () => 'written' }))
  ctx.tools.define(defineTool({ name: 'read', description: 'Read', traits: { effect: 'read' }, run: () => 'read' }))
  const call = async (name: string, session = user) => (await ctx.tools.execute([{ id: `c-${name}`, name, arguments: {} }], { session }))[0]
  return { ctx, fiber, errors, warnings, decisions, call, guard }
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0))

describe('PermissionService', () => {
  it('takes sandboxed rules in its config schema, refuses a non-boolean, and gives tools call.mode', async () => {
    const rule = { permission: 'shell', sandboxed: true, decision: 'allow' as const }
    expect(PermissionService.Config({ rules: [rule] }).rules).toEqual([expect.objectContaining(rule)])
    expect(() => PermissionService.Config({ rules: [{ ...rule, sandboxed: 'yes' as never }] })).toThrow(/sandboxed/)
    const { ctx, call } = await setup({ rules: [rule] })
    ctx.tools.define(defineTool({ name: 'boxed', description: 'Run', permission: () => ({ name: 'shell', sandboxed: true }), traits: { effect: 'exec' }, run: (_, c) => `ran in ${c.mode}` }))
    expect(await call('boxed')).toMatchObject({ status: 'ok', content: 'ran in default' })
    ctx.permissions.setMode(user.id, 'acceptEdits')
    expect(await call('boxed')).toMatchObject({ status: 'ok', content: 'ran in acceptEdits' })
  })

  it('provides ctx.permissions and gates ctx.tools while loaded; unloading fails closed again', async () => {
    const { ctx, fiber, call, decisions } = await setup({ rules: [{ permission: 'tool:write', decision: 'allow' }] })
    expect(ctx.permissions).toBeInstanceOf(PermissionService)
    expect(ctx.tools.registry.permissions).toBe(ctx.permissions.engine)
    expect(await call('write')).toMatchObject({ status: 'ok', content: 'written' })
    expect(decisions.map((e) => [e.phase, e.decision, e.source.kind])).toEqual([['authorize', 'allow', 'rule']])
    expect(decisions[0].source).toMatchObject({ origin: 'config.rules[0]' })
    await fiber.dispose()
    expect(ctx.get('permissions')).toBeUndefined()
    expect(ctx.tools.registry.permissions).toBeUndefined()
    expect(await call('write')).toMatchObject({ status: 'denied', code: 'no_permission_service' })
    await fiber.dispose()
  })

  it('adds a plugin\'s rules and askers as labelled effects that go away with the plugin', async () => {
    const { ctx, call } = await setup()
    let asked = 0
    const plugin = {
      name: 'ops',
      inject: ['permissions'],
      apply(ctx: Context) {
        ctx.permissions.rule({ permission: 'tool:write', decision: 'deny' })
        ctx.permissions.asker(() => { asked++ })
      },
    }
    const fiber = await ctx.plugin(plugin)
    expect(fiber.getEffects().map((effect) => effect.label)).toEqual(['ctx.permissions.rule("tool:write")', 'ctx.permissions.asker()'])
    expect(ctx.permissions.authorize({ session: user, permission: { name: 'tool:write' }, effect: 'write', tool: 'write', args: {} }))
      .toMatchObject({ decision: 'deny', reason: 'rule (tool:write) from plugin "ops" denies it' })
    expect(await call('write')).toMatchObject({ status: 'denied' })
    await fiber.dispose()
    expect(ctx.permissions.engine.ruleCount).toBe(0)
    // With the plugin's asker gone, an ask is denied saying nobody can be asked.
    expect((await call('write')).content).toContain('no asker is registered')
    expect(asked).toBe(0)
  })

  it('returns disposers from rule() that are harmless to call twice, and throws a coded error for a bad rule', async () => {
    const { ctx } = await setup()
    const dispose = ctx.permissions.rule({ permission: 'tool:write', decision: 'allow' })
    expect(ctx.permissions.engine.ruleCount).toBe(1)
    dispose()
    dispose()
    expect(ctx.permissions.engine.ruleCount).toBe(0)
    expect(() => ctx.permissions.rule({ permission: 'tool:write', decision: 'allow', user: ['u1'] } as any)).toThrow(PermissionError)
    expect(() => ctx.permissions.asker('yes' as any)).toThrow(expect.objectContaining({ code: 'INVALID_ASKER' }))
  })

  it('rejects an invalid config', async () => {
    const ctx = new Context()
    const guard = guardLogs(ctx)
    guard.expect('[app] ValidationError: $.rules[0].decision expected "allow" | "ask" | "deny" but got "maybe"')
    guard.expect('[app] ValidationError: $.mode expected "default" | "readOnly" | "acceptEdits" | "trust" but got "yolo"')
    await ctx.plugin(ToolService)
    await expect(ctx.plugin(PermissionService, { rules: [{ permission: 'x', decision: 'maybe' as any }] })).rejects.toThrow(/decision/)
    await expect(ctx.plugin(PermissionService, { mode: 'yolo' as any })).rejects.toThrow(/mode/)
    expect(ctx.get('permissions')).toBeUndefined()
  })

  it('switches modes per session and lists and revokes grants', async () => {
    const { ctx, call } = await setup()
    ctx.permissions.setMode('s1', 'acceptEdits')
    expect(ctx.permissions.modeOf('s1')).toBe('acceptEdits')
    expect((await call('write')).status).toBe('ok')
    ctx.permissions.setMode('s1', undefined)
    ctx.permissions.asker(async () => ({ decision: 'allow', scope: 'session', by: 'u1' }))
    expect((await call('write')).status).toBe('ok')
    const [grant] = ctx.permissions.grants()
    expect(grant).toMatchObject({ scope: 'session', permission: 'tool:write', subject: { sessionId: 's1', userId: 'u1' } })
    expect(ctx.permissions.revoke(grant.id)).toBe(true)
    expect(ctx.permissions.grants()).toEqual([])
  })

  it('durable: false, ends waiting calls denied with a reason when reloaded, keeps always grants, and never hangs', async () => {
    const { ctx, fiber, call, decisions } = await setup({ askTimeout: 600_000, durable: false })
    const asker = {
      name: 'chat',
      inject: ['permissions'],
      apply(ctx: Context) {
        ctx.permissions.asker((request, { respond }) => {
          // The first request is remembered for good; later ones wait.
          if (request.callId === 'first') respond({ decision: 'allow', scope: 'always', by: 'u1' })
        })
      },
    }
    await ctx.plugin(asker)
    const [first] = await ctx.tools.execute([{ id: 'first', name: 'write', arguments: {} }], { session: user })
    expect(first.status).toBe('ok')
    const waiting = Promise.all([call('write', { ...user, userId: 'u2' }), call('write', { ...user, userId: 'u3' })])
    while (ctx.permissions.pending().length < 2) await tick()
    fiber.update({ storePath: join(dir, 'permissions.json'), mode: 'default', askTimeout: 600_000, durable: false })
    const results = await waiting
    for (const result of results) {
      expect(result).toMatchObject({ status: 'denied', content: 'Permission denied: the permissions service stopped (reloaded or unloaded) while the call waited for an answer' })
    }
    expect(decisions.filter((e) => e.source.kind === 'stopped')).toHaveLength(2)
    await fiber.await()
    // Reloaded: a new engine gates the tools, with the always grant read back from the file.
    expect(ctx.tools.registry.permissions).toBe(ctx.permissions.engine)
    expect(ctx.permissions.grants()).toMatchObject([{ scope: 'always', subject: { userId: 'u1', platform: 'discord' }, permission: 'tool:write' }])
    expect(await call('write')).toMatchObject({ status: 'ok' })
    const stored = JSON.parse(await readFile(join(dir, 'permissions.json'), 'utf8'))
    expect(stored.grants).toHaveLength(1)
    // Disposed while a call waits: it ends denied too.
    const last = call('write', { ...user, userId: 'u4' })
    while (ctx.permissions.pending().length < 1) await tick()
    await fiber.dispose()
    expect((await last).status).toBe('denied')
  })

  it('reports a corrupt grant store as a warning and asks instead of allowing', async () => {
    const { writeFile } = await import('node:fs/promises')
    await writeFile(join(dir, 'permissions.json'), '{"version":1,"grants":[{"id":1}]}')
    const { ctx, warnings, call, guard } = await setup()
    guard.expect(/^\[PermissionService\] the grant store \S+\/permissions\.json is corrupt: grants\[0\] is malformed; it was moved to \S+\/permissions\.json\.corrupt-\d+ and none of its grants apply$/)
    expect(warnings.some((args) => String(args[1]).includes('is corrupt: grants[0] is malformed'))).toBe(true)
    expect(ctx.permissions.engine.storeProblem?.movedTo).toMatch(/permissions\.json\.corrupt-\d+$/)
    expect((await call('write')).status).toBe('denied')
  })
})
