import { type Approver, type AskerContext, defineTool, mayAnswer, type PermissionRequest } from '@dogu/core'
import type { Context } from 'koishi'
import { describe, expect, it } from 'vitest'
import * as Dogu from '../src'
import { PermissionService, toolsetFor } from '../src'
import { approverPermissions } from '../src/koishi-permission'
import { koishiApp, sessionOf } from './koishi-app'

const policy = { platform: 'mock', permissions: ['dogu.ops', 'authority:3'] }

describe('approverPermissions: the Koishi permissions a replying user holds, for the asker to attest', () => {
  it('tests the policy\'s names as Koishi answers for the user, from the user table', async () => {
    const { app } = await koishiApp({ database: true })
    await app.mock.initUser('ops', 1, { permissions: ['dogu.ops'] })
    await app.mock.initUser('senior', 3)
    await app.mock.initUser('guest', 1)
    expect(await approverPermissions(app, await sessionOf(app, 'ops'), policy)).toEqual(['dogu.ops'])
    expect(await approverPermissions(app, await sessionOf(app, 'senior'), policy)).toEqual(['authority:3'])
    expect(await approverPermissions(app, await sessionOf(app, 'guest'), policy)).toEqual([])
    // An authority the asker already resolved is the one tested.
    expect(await approverPermissions(app, await sessionOf(app, 'guest'), policy, { authority: 4 })).toEqual(['authority:3'])
  })

  it('tests nothing when the policy names no permission', async () => {
    const { app } = await koishiApp()
    let tested = 0
    app.permissions.provide('dogu.ops', () => { tested++; return true })
    const session = await sessionOf(app, 'anyone')
    expect(await approverPermissions(app, session, { userId: 'u1', platform: 'mock', authority: 4 })).toEqual([])
    expect(await approverPermissions(app, session, { platform: 'mock', permissions: [] })).toEqual([])
    expect(tested).toBe(0)
    expect(await approverPermissions(app, session, { platform: 'mock', permissions: ['dogu.ops'] })).toEqual(['dogu.ops'])
    expect(tested).toBe(1)
  })

  it('never tests as "no user": without a database a user has the default authority, which Koishi\'s authority:N sees', async () => {
    const { app } = await koishiApp({ dogu: { defaultAuthority: 2 } })
    const session = await sessionOf(app, 'nobody')
    expect(session.user).toBeUndefined()
    // Koishi itself lets a session without a user through authority checks.
    expect(await app.permissions.test(['authority:3'], session)).toBe(true)
    expect(await approverPermissions(app, session, policy)).toEqual([])
    expect(await approverPermissions(app, session, { platform: 'mock', permissions: ['authority:2'] })).toEqual(['authority:2'])
  })

  it('counts a check that throws as not held (Koishi logs it)', async () => {
    const { app, guard } = await koishiApp()
    guard.expect('[app] Error: provider down')
    app.permissions.provide('dogu.broken', () => { throw new Error('provider down') })
    app.permissions.provide('dogu.ops', () => true)
    expect(await approverPermissions(app, await sessionOf(app, 'u9'), { permissions: ['dogu.broken', 'dogu.ops'] })).toEqual(['dogu.ops'])
  })
})

describe('a rule\'s approvers in the Koishi config', () => {
  it('validates approvers with a path naming the field, and takes good ones', () => {
    const rule = { permission: 'tool:deploy', decision: 'ask' as const, approvers: { permissions: ['dogu.ops'], caller: false } }
    // A config form's empty lists come along; they name nobody.
    expect(PermissionService.Config({ rules: [rule] }).rules![0].approvers).toEqual({ users: [], permissions: ['dogu.ops'], caller: false })
    expect(() => Dogu.Config({ permissions: { rules: [{ ...rule, approvers: { authority: 'x' as never } }] } }))
      .toThrow('$.permissions.rules[0].approvers.authority expected number but got x')
    expect(() => PermissionService.Config({ rules: [{ ...rule, approvers: { users: [3 as never] } }] }))
      .toThrow('$.rules[0].approvers.users[0] expected string but got 3')
  })

  it('lets a holder of a listed Koishi permission answer, as an asker attests with approverPermissions, and nobody else', async () => {
    const { app, guard } = await koishiApp({
      database: true,
      dogu: { permissions: { rules: [{ permission: 'tool:deploy', decision: 'ask', approvers: { permissions: ['dogu.ops'], caller: false } }] } },
    })
    guard.expect(/ignored an answer from mock:guest to permission request .*: only holders of dogu\.ops may answer/)
    guard.expect(/ignored an answer from mock:caller to permission request .*: only holders of dogu\.ops may answer/)
    await app.mock.initUser('ops', 1, { permissions: ['dogu.ops'] })
    await app.mock.initUser('guest', 5)
    await app.mock.initUser('caller', 5)
    app.tools.define(defineTool({ name: 'deploy', description: 'Deploy', traits: { effect: 'exec' }, run: () => 'deployed' }))
    let asked!: { request: PermissionRequest; context: AskerContext }
    app.permissions.asker((request, context) => { asked = { request, context } })
    const toolset = await toolsetFor(app, await sessionOf(app, 'caller', '456'))
    const result = toolset.execute([{ id: 'c1', name: 'deploy', arguments: {} }])
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(asked.request.approvers).toEqual({ platform: 'mock', permissions: ['dogu.ops'] })
    // What a chat asker does with a reply: who wrote it, and what Koishi says they hold.
    const answerAs = async (app: Context, userId: string) => {
      const session = await sessionOf(app as never, userId, '456')
      const { authority } = await app.permissions.resolveSession(session)
      const by: Approver = { id: userId, platform: 'mock', authority }
      const held = await approverPermissions(app, session, asked.request.approvers, { authority })
      if (held.length) by.permissions = held
      return { mayAnswer: mayAnswer(asked.request.approvers, by), status: asked.context.respond({ decision: 'allow', by }) }
    }
    expect(await answerAs(app, 'guest')).toEqual({ mayAnswer: false, status: 'not-allowed' })
    expect(await answerAs(app, 'caller')).toEqual({ mayAnswer: false, status: 'not-allowed' })
    expect(await answerAs(app, 'ops')).toEqual({ mayAnswer: true, status: 'accepted' })
    expect((await result)[0]).toMatchObject({ status: 'ok', content: 'deployed' })
  })
})
