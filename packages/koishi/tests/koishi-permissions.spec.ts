import { defineTool, PermissionEngine } from '@dogu/core'
import { type Context, Permissions } from 'koishi'
import { describe, expect, it } from 'vitest'
import * as Dogu from '../src'
import { doguSession, type KoishiPermissionRule, PermissionService, toolsetFor } from '../src'
import { koishiApp, sessionOf, settle } from './koishi-app'

const deploy = defineTool({ name: 'deploy', description: 'Deploy', traits: { effect: 'exec' }, run: () => 'deployed' })

/** Runs `deploy` for the next message of `userId` in channel 456, through `toolsetFor`. */
async function deployAs(app: Context, userId: string) {
  const toolset = await toolsetFor(app, await sessionOf(app as any, userId, '456'))
  const [result] = await toolset.execute([{ id: 'c1', name: 'deploy', arguments: {} }])
  return result
}

describe('ctx.permissions on Koishi: one object, both APIs', () => {
  it('keeps Koishi\'s own define, provide, inherit, depend, test and list working with Dogu loaded', async () => {
    const { app } = await koishiApp()
    expect(typeof app.permissions.authorize).toBe('function')
    expect(app.permissions.engine).toBeInstanceOf(PermissionEngine)
    const seen: string[] = []
    app.plugin({
      name: 'perms',
      apply(ctx: Context) {
        ctx.permissions.provide('test.flag', (_, session) => session.userId === 'root')
        ctx.permissions.define('test.list', { list: () => ['test.list'], check: () => true })
        ctx.permissions.inherit('test.child', ['test.flag'])
        ctx.permissions.provide('test.both', () => true)
        ctx.permissions.depend('test.both', ['test.flag', 'test.list'])
        seen.push(typeof ctx.permissions.rule, typeof ctx.permissions.define)
      },
    })
    await settle(app)
    expect(seen).toEqual(['function', 'function'])
    expect(await app.permissions.test(['test.flag'], { userId: 'root' })).toBe(true)
    expect(await app.permissions.test(['test.flag'], { userId: 'guest' })).toBe(false)
    expect(await app.permissions.test(['test.child'], { userId: 'root' })).toBe(true)
    expect(await app.permissions.test(['test.both'], { userId: 'root' })).toBe(true)
    expect(await app.permissions.test(['test.both'], { userId: 'guest' })).toBe(false)
    expect(app.permissions.list()).toEqual(expect.arrayContaining(['authority:0', 'authority:4', 'test.list']))
    expect(await app.permissions.test(['authority:3'], { user: { authority: 3 } } as any)).toBe(true)
    expect(await app.permissions.test(['authority:3'], { user: { authority: 2 } } as any)).toBe(false)
  })

  it('adds Dogu\'s methods to Koishi\'s own object while loaded, and takes them away with the plugin', async () => {
    const { app, dogu } = await koishiApp()
    const koishi = (app.permissions as any)[Symbol.for('cordis.original')]
    expect(koishi).toBeInstanceOf(Permissions)
    for (const method of ['authorize', 'rule', 'asker', 'grants', 'revoke', 'setMode', 'modeOf', 'endSession', 'pending', 'resolveSession']) {
      expect(typeof (app.permissions as any)[method]).toBe('function')
    }
    // Koishi's own members are not touched.
    expect(Object.keys(koishi)).toEqual(['store'])
    dogu!.dispose()
    await settle(app)
    expect('authorize' in koishi).toBe(false)
    expect((app.permissions as any).engine).toBeUndefined()
    expect(await app.permissions.test(['authority:1'], { user: { authority: 1 } } as any)).toBe(true)
  })

  it('refuses a second Dogu permissions service in the same app, saying why', async () => {
    const { app, errors, guard } = await koishiApp()
    const { PermissionService } = await import('../src')
    guard.expect('[app] PermissionError: ctx.permissions already has engine, authorize, rule, asker, grants, revoke, setMode, modeOf, endSession, pending, resolveSession: is another Dogu permissions service loaded in this app?')
    // Another class, so that cordis loads it as another plugin, not a fork of the first.
    const second = app.plugin(class Again extends PermissionService {}, { storePath: '/nonexistent/never-written.json' })
    await settle(app)
    expect(second.runtime.error).toMatchObject({ code: 'INVALID_OPTIONS', message: expect.stringContaining('ctx.permissions already has engine, authorize') })
    expect(errors).toContain(second.runtime.error)
    expect(app.permissions.engine).toBe(app.tools.registry.permissions)
  })

  it('ties a plugin\'s rule and asker to that plugin, seen through the caller\'s context', async () => {
    const { app } = await koishiApp()
    let asked = 0
    const ops = app.plugin({
      name: 'ops',
      apply(ctx: Context) {
        ctx.permissions.rule({ permission: 'tool:deploy', decision: 'deny' })
        ctx.permissions.asker(() => { asked++ })
      },
    })
    await settle(app)
    expect(app.permissions.authorize({ session: { id: 's' }, permission: { name: 'tool:deploy' }, effect: 'exec', tool: 'deploy', args: {} }))
      .toMatchObject({ decision: 'deny', reason: 'rule (tool:deploy) from plugin "ops" denies it' })
    ops.dispose()
    expect(app.permissions.engine.ruleCount).toBe(0)
    app.tools.define(deploy)
    const [result] = await app.tools.execute([{ id: 'c1', name: 'deploy' }], { session: { id: 's' } })
    expect(result.content).toContain('no asker is registered')
    expect(asked).toBe(0)
  })
})

describe('Koishi\'s authority decides `authority` rules', () => {
  const rules: KoishiPermissionRule[] = [{ permission: 'tool:deploy', authority: 3, decision: 'allow' }]

  it('reads the authority from the user table when a database is loaded', async () => {
    const { app } = await koishiApp({ database: true, dogu: { permissions: { rules } } })
    app.tools.define(deploy)
    await app.mock.initUser('admin', 3)
    await app.mock.initUser('user', 1)
    expect(await deployAs(app, 'admin')).toMatchObject({ status: 'ok', content: 'deployed' })
    const denied = await deployAs(app, 'user')
    expect(denied).toMatchObject({ status: 'denied' })
    expect(denied.content).toContain('no rule matches; exec tools need approval by default')
  })

  it('reads the user table itself for a session Koishi has not loaded a user into', async () => {
    const { app } = await koishiApp({ database: true, dogu: { permissions: { rules } } })
    await app.mock.initUser('admin', 3, { permissions: ['dogu.deploy'] })
    const session = app.mock.session({ user: { id: 'admin' }, channel: { id: '456', type: 0 }, guild: { id: '456' } })
    expect(session.user).toBeUndefined()
    expect(doguSession(session).authority).toBe(1)
    expect(await app.permissions.resolveSession(session)).toMatchObject({ id: 'mock:456', userId: 'admin', authority: 3 })
    // Unknown to the table: the configured default.
    const stranger = app.mock.session({ user: { id: 'nobody' }, channel: { id: '456', type: 0 } })
    expect((await app.permissions.resolveSession(stranger)).authority).toBe(1)
  })

  it('falls back to defaultAuthority without a database', async () => {
    const high = await koishiApp({ dogu: { defaultAuthority: 3, permissions: { rules } } })
    high.app.tools.define(deploy)
    expect(await deployAs(high.app, 'anyone')).toMatchObject({ status: 'ok' })
    const low = await koishiApp({ dogu: { permissions: { rules } } })
    low.app.tools.define(deploy)
    expect(await deployAs(low.app, 'anyone')).toMatchObject({ status: 'denied' })
  })
})

describe('a sandboxed rule in the Koishi config', () => {
  const sandboxedTool = (name: string, sandboxed?: boolean) => defineTool({
    name,
    description: 'Run a command',
    permission: () => (sandboxed === undefined ? { name: 'shell' } : { name: 'shell', sandboxed }),
    traits: { effect: 'exec' },
    run: (_, call) => `ran in ${call.mode}`,
  })

  it('is accepted and kept by the plugin\'s schema, and a non-boolean is refused naming it', () => {
    const rule = { permission: 'shell', sandboxed: true, decision: 'allow' as const }
    expect(Dogu.Config({ permissions: { rules: [rule] } }).permissions?.rules).toEqual([expect.objectContaining(rule)])
    expect(PermissionService.Config({ rules: [{ ...rule, sandboxed: false }] }).rules).toEqual([expect.objectContaining({ ...rule, sandboxed: false })])
    expect(() => Dogu.Config({ permissions: { rules: [{ ...rule, sandboxed: 'yes' as never }] } })).toThrow(/sandboxed/)
  })

  it('allows a tool that says it runs sandboxed, not one that does not; call.mode follows the session', async () => {
    const { app } = await koishiApp({ dogu: { permissions: { rules: [{ permission: 'shell', sandboxed: true, decision: 'allow' }] } } })
    app.tools.define(sandboxedTool('boxed', true))
    app.tools.define(sandboxedTool('plain'))
    const run = async (name: string) => {
      const toolset = await toolsetFor(app, await sessionOf(app as any, 'u', '456'))
      return (await toolset.execute([{ id: 'c1', name, arguments: {} }]))[0]
    }
    expect(await run('boxed')).toMatchObject({ status: 'ok', content: 'ran in default' })
    expect(await run('plain')).toMatchObject({ status: 'denied' })
    const { id } = await toolsetFor(app, await sessionOf(app as any, 'u', '456')).then((toolset) => toolset.session)
    app.permissions.setMode(id, 'trust')
    expect(await run('boxed')).toMatchObject({ status: 'ok', content: 'ran in trust' })
  })
})

describe('a rule may name a Koishi permission', () => {
  it('allows the users Koishi\'s permission system says hold it: user.permissions, a provider, authority:N', async () => {
    const { app } = await koishiApp({
      database: true,
      dogu: { permissions: { rules: [{ permission: 'tool:deploy', koishiPermission: ['dogu.deploy'], decision: 'allow' }] } },
    })
    app.tools.define(deploy)
    await app.mock.initUser('granted', 1, { permissions: ['dogu.deploy'] })
    await app.mock.initUser('other', 1)
    await app.mock.initUser('bot-admin', 1)
    expect(await deployAs(app, 'granted')).toMatchObject({ status: 'ok' })
    expect(await deployAs(app, 'other')).toMatchObject({ status: 'denied' })
    // Another plugin provides the permission; Dogu asks Koishi, which asks it.
    app.plugin({ name: 'grants', apply: (ctx: Context) => { ctx.permissions.provide('dogu.deploy', (_, session) => session.userId === 'bot-admin') } })
    await settle(app)
    expect(await deployAs(app, 'bot-admin')).toMatchObject({ status: 'ok' })
    // And a plugin's rule may name one too: `authority:N` as Koishi reads it.
    app.permissions.rule({ permission: 'tool:deploy', koishiPermission: 'authority:2', decision: 'deny' })
    await app.mock.initUser('senior', 2, { permissions: ['dogu.deploy'] })
    expect(await deployAs(app, 'senior')).toMatchObject({ status: 'denied', content: expect.stringContaining('from plugin "root" denies it') })
    expect(await deployAs(app, 'granted')).toMatchObject({ status: 'ok' })
  })

  it('treats a session whose facts were never resolved cautiously: deny rules match, allow rules do not', async () => {
    const { app } = await koishiApp({
      dogu: { permissions: { rules: [
        { permission: 'tool:deploy', koishiPermission: ['dogu.deploy'], decision: 'allow' },
        { permission: 'tool:rm', koishiPermission: ['dogu.guest'], decision: 'deny' },
      ] } },
    })
    const unresolved = doguSession(await sessionOf(app, 'u', '456'))
    const decide = (name: string, session: object) => app.permissions.authorize({ session: session as any, permission: { name }, effect: 'exec', tool: name, args: {} }).decision
    expect(decide('tool:deploy', unresolved)).toBe('ask')
    expect(decide('tool:rm', unresolved)).toBe('deny')
    const resolved = await app.permissions.resolveSession(await sessionOf(app, 'u', '456'))
    expect(resolved.koishiPermissions).toEqual([])
    expect(decide('tool:deploy', resolved)).toBe('ask')
    expect(decide('tool:rm', resolved)).toBe('ask')
  })

  it('rejects a malformed koishiPermission, in config and from a plugin, naming it', async () => {
    const { app, guard } = await koishiApp({ dogu: false })
    const { PermissionService } = await import('../src')
    guard.expect('[app] ValidationError: $.rules[0].koishiPermission[0] expected string but got 3')
    const fork = app.plugin(PermissionService, { rules: [{ permission: 'x', koishiPermission: [3] as any, decision: 'allow' }], storePath: '/nonexistent/x.json' })
    await settle(app)
    expect(fork.runtime.error).toMatchObject({ message: expect.stringContaining('$.rules[0].koishiPermission[0] expected string') })
    fork.dispose()
    app.plugin(PermissionService, { storePath: '/nonexistent/x.json' })
    await settle(app)
    expect(() => app.permissions.rule({ permission: 'x', koishiPermission: [3] as any, decision: 'allow' })).toThrow(expect.objectContaining({
      code: 'INVALID_RULE',
      message: 'plugin "root": "koishiPermission" must be a Koishi permission name or a list of them, e.g. "authority:3" or ["dogu.deploy"]',
    }))
  })
})
