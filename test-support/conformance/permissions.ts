import { type AskerContext, defineTool, type DecisionEvent, PermissionError, type PermissionRequest } from '@dogu/core'
import { describe, expect, it } from 'vitest'
import { call, definer, echo, save, session, until, useApps } from './fixture'
import type { ConformanceHost, PluginContext } from './host'

const writeRequest = { session, permission: { name: 'tool:save' }, effect: 'write' as const, tool: 'save', args: {} }

/** `ctx.permissions`: the gate of `ctx.tools`, its rules, askers, grants and modes. */
export function permissionsConformance(host: ConformanceHost) {
  describe(`${host.name}: ctx.permissions`, () => {
    const apps = useApps(host)
    /** An app with a plugin defining `echo` (read) and `save` (write). */
    const setup = async (options = {}) => {
      const app = await apps.app(options)
      const decisions: DecisionEvent[] = []
      app.on('permissions/decision', (event: DecisionEvent) => { decisions.push(event) })
      await app.plugin(definer('pack', echo, save).plugin)
      return { app, decisions }
    }

    it('fails closed without the permissions service: read tools run, the others are denied saying why', async () => {
      const { app } = await setup({ permissions: false })
      expect(app.tools.registry.permissions).toBeUndefined()
      expect(await call(app, 'echo', { text: 'hi' })).toMatchObject({ status: 'ok', content: 'hi' })
      expect(await call(app, 'save', { text: 'a' })).toMatchObject({
        status: 'denied',
        code: 'no_permission_service',
        content: 'Permission denied: no permission service is loaded, so only read-only tools may run ("save" has effect "write").',
      })
    })

    it('gates ctx.tools while loaded, with its rules from config; unloading fails closed again', async () => {
      const { app, decisions } = await setup({ permissions: { rules: [{ permission: 'tool:save', decision: 'allow' }] } })
      expect(app.tools.registry.permissions).toBe(app.permissions.engine)
      expect(await call(app, 'save', { text: 'a' })).toMatchObject({ status: 'ok', content: 'saved' })
      expect(decisions.map((event) => [event.phase, event.decision, event.source.kind])).toEqual([['authorize', 'allow', 'rule']])
      expect(decisions[0].source).toMatchObject({ origin: 'config.rules[0]' })
      await app.unload('permissions')
      expect(app.tools.registry.permissions).toBeUndefined()
      expect(await call(app, 'save', { text: 'a' })).toMatchObject({ status: 'denied', code: 'no_permission_service' })
    })

    it('decides allow, ask and deny by rules; a plugin\'s rule goes away with the plugin', async () => {
      const { app } = await setup({ permissions: { rules: [{ permission: 'tool:echo', authority: 4, decision: 'deny', name: 'no echo for admins' }] } })
      expect(app.permissions.authorize(writeRequest)).toMatchObject({ decision: 'ask', reason: 'no rule matches; write tools need approval by default' })
      expect(app.permissions.authorize({ ...writeRequest, permission: { name: 'tool:echo' }, effect: 'read', session: { ...session, authority: 4 } }))
        .toMatchObject({ decision: 'deny', reason: 'rule "no echo for admins" from config.rules[0] denies it' })
      const ops = await app.plugin({
        name: 'ops',
        inject: ['tools', 'permissions'],
        apply(ctx: PluginContext) {
          ctx.permissions.rule({ permission: 'tool:save', users: ['u1'], decision: 'allow' })
          ctx.permissions.rule({ permission: 'tool:save', users: ['u2'], decision: 'deny' })
        },
      })
      expect(app.permissions.engine.ruleCount).toBe(3)
      expect(app.permissions.authorize(writeRequest)).toMatchObject({ decision: 'allow', reason: 'rule (tool:save) from plugin "ops" allows it' })
      expect(await call(app, 'save', { text: 'a' })).toMatchObject({ status: 'ok' })
      expect(await call(app, 'save', { text: 'a' }, { ...session, userId: 'u2' })).toMatchObject({
        status: 'denied',
        content: 'Permission denied: rule (tool:save) from plugin "ops" denies it',
      })
      await ops.dispose()
      expect(app.permissions.engine.ruleCount).toBe(1)
      expect((await call(app, 'save', { text: 'a' })).content).toContain('no asker is registered')
    })

    it('shows an ask to a plugin\'s asker; its answer lets the call run, and the asker goes with its plugin', async () => {
      const { app, decisions } = await setup()
      const shown: PermissionRequest[] = []
      const responders: AskerContext['respond'][] = []
      const chat = await app.plugin({
        name: 'chat',
        inject: ['tools', 'permissions'],
        apply(ctx: PluginContext) {
          ctx.permissions.asker((request, { respond }) => {
            shown.push(request)
            responders.push(respond)
          })
        },
      })
      const pending = call(app, 'save', { text: 'a' })
      await until(() => app.permissions.pending().length === 1, 'the request to be pending')
      expect(app.permissions.pending()).toEqual(shown)
      expect(shown[0]).toMatchObject({ tool: 'save', summary: 'save(text=a)', approvers: { userId: 'u1', platform: 'test', authority: 4 } })
      // Someone else's answer, or the same id on another platform, does not count: the request waits on.
      app.guard.expect(/ignored an answer from test:u9 to permission request perm_\S+ \(save\(text=a\)\): only the caller \(test:u1\)/)
      app.guard.expect(/ignored an answer from elsewhere:u1 to permission request perm_\S+ \(save\(text=a\)\): only the caller \(test:u1\)/)
      expect(responders[0]({ decision: 'deny', by: { id: 'u9', platform: 'test', authority: 1 } })).toBe('not-allowed')
      expect(responders[0]({ decision: 'deny', by: { id: 'u1', platform: 'elsewhere' } })).toBe('not-allowed')
      expect(app.permissions.pending()).toHaveLength(1)
      expect(responders[0]({ decision: 'allow', by: { id: 'u1', platform: 'test' } })).toBe('accepted')
      expect(await pending).toMatchObject({ status: 'ok', content: 'saved' })
      expect(responders[0]({ decision: 'deny', by: 'u1' })).toBe('closed')
      expect(decisions.filter((event) => event.phase === 'approve').map((event) => [event.decision, event.source.kind])).toEqual([['allow', 'answer']])
      await chat.dispose()
      expect((await call(app, 'save', { text: 'a' })).content).toContain('no asker is registered')
    })

    it('remembers a session answer as a grant that can be listed and revoked', async () => {
      const { app } = await setup()
      await app.plugin({
        name: 'chat',
        inject: ['tools', 'permissions'],
        apply(ctx: PluginContext) {
          ctx.permissions.asker(async () => ({ decision: 'allow', scope: 'session', by: 'u1' }))
        },
      })
      expect(await call(app, 'save', { text: 'a' })).toMatchObject({ status: 'ok' })
      const grants = app.permissions.grants()
      expect(grants).toEqual([expect.objectContaining({ scope: 'session', permission: 'tool:save', subject: { sessionId: 's1', userId: 'u1' } })])
      expect(app.permissions.authorize(writeRequest)).toMatchObject({ decision: 'allow', rule: { kind: 'grant' } })
      expect(app.permissions.revoke(grants[0].id)).toBe(true)
      expect(app.permissions.revoke(grants[0].id)).toBe(false)
      expect(app.permissions.grants()).toEqual([])
      expect(app.permissions.authorize(writeRequest).decision).toBe('ask')
    })

    it('switches modes per session; explicit deny rules still win', async () => {
      const { app } = await setup({ permissions: { mode: 'readOnly', rules: [{ permission: 'tool:echo', users: ['u3'], decision: 'deny' }] } })
      expect(app.permissions.modeOf('s1')).toBe('readOnly')
      expect(await call(app, 'save', { text: 'a' })).toMatchObject({ status: 'denied', content: 'Permission denied: the session is in readOnly mode, which denies write tools' })
      app.permissions.setMode('s1', 'acceptEdits')
      expect(app.permissions.modeOf('s1')).toBe('acceptEdits')
      expect(await call(app, 'save', { text: 'a' })).toMatchObject({ status: 'ok' })
      app.permissions.setMode('s1', 'trust')
      expect(await call(app, 'echo', { text: 'a' }, { ...session, userId: 'u3' })).toMatchObject({ status: 'denied' })
      app.permissions.endSession('s1')
      expect(app.permissions.modeOf('s1')).toBe('readOnly')
      expect(() => app.permissions.setMode('s1', 'yolo' as never)).toThrow(PermissionError)
    })

    it('lets a tool ask ctx.permissions.authorize itself, from the plugin that defined it', async () => {
      const { app } = await setup({ permissions: { rules: [{ permission: 'deploy:run', target: 'staging', decision: 'allow' }] } })
      await app.plugin({
        name: 'deployer',
        inject: ['tools', 'permissions'],
        apply(ctx: PluginContext) {
          ctx.tools.define(defineTool({
            name: 'plan',
            description: 'Says where a deploy may go without asking',
            traits: { effect: 'read' },
            run: (_, call) => ['staging', 'prod']
              .map((target) => `${target}: ${ctx.permissions.authorize({ session: call.session, permission: { name: 'deploy:run', target }, effect: 'exec', tool: 'plan', args: {} }).decision}`)
              .join(', '),
          }))
        },
      })
      expect(await call(app, 'plan')).toMatchObject({ status: 'ok', content: 'staging: allow, prod: ask' })
    })

    it('returns disposers harmless to call twice, and throws coded errors for a bad rule or asker', async () => {
      const { app } = await setup()
      const dispose = app.permissions.rule({ permission: 'tool:save', decision: 'allow' })
      expect(app.permissions.engine.ruleCount).toBe(1)
      dispose()
      dispose()
      expect(app.permissions.engine.ruleCount).toBe(0)
      expect(() => app.permissions.rule({ permission: 'tool:save', decision: 'allow', user: ['u1'] } as never)).toThrow(expect.objectContaining({ code: 'INVALID_RULE' }))
      expect(() => app.permissions.asker('yes' as never)).toThrow(expect.objectContaining({ code: 'INVALID_ASKER' }))
      expect(app.permissions.engine.ruleCount).toBe(0)
    })
  })
}
