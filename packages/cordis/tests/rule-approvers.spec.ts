import { type AskerContext, defineTool, type PermissionRequest, type Session } from '@dogu/core'
import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { ToolService } from '../src'
import { PermissionService } from '../src/permissions-service'

const caller: Session = { id: 's1', userId: 'u1', platform: 'discord', authority: 5 }

describe('PermissionService: a rule\'s approvers', () => {
  it('takes approvers in its config schema and refuses bad ones with a path naming the field', () => {
    const rule = { permission: 'tool:deploy', decision: 'ask' as const, approvers: { users: ['discord:42'], authority: 5, caller: false } }
    expect(PermissionService.Config({ rules: [rule] }).rules![0].approvers).toEqual({ users: ['discord:42'], permissions: [], authority: 5, caller: false })
    expect(() => PermissionService.Config({ rules: [{ ...rule, approvers: { authority: 'x' as never } }] })).toThrow('$.rules[0].approvers.authority expected number but got x')
    expect(() => PermissionService.Config({ rules: [{ ...rule, approvers: { caller: 'no' as never } }] })).toThrow('$.rules[0].approvers.caller expected boolean but got no')
  })

  it('asks the rule\'s approvers: the caller is refused, a named user settles it', async () => {
    const ctx = new Context()
    const guard = guardLogs(ctx)
    guard.expect(/ignored an answer from discord:u1 to permission request .*: only users discord:42 may answer/)
    await ctx.plugin(ToolService)
    const fiber = await ctx.plugin(PermissionService, {
      storePath: '/nonexistent/permissions.json',
      // Empty lists, as a config form leaves them, on every rule: they name nobody.
      rules: [{ permission: 'tool:deploy', decision: 'ask', approvers: { users: ['discord:42'], caller: false } }, { permission: 'tool:read', decision: 'allow', approvers: { users: [] } }],
    })
    ctx.tools.define(defineTool({ name: 'deploy', description: 'Deploy', traits: { effect: 'exec' }, run: () => 'deployed' }))
    let asked!: { request: PermissionRequest; context: AskerContext }
    ctx.permissions.asker((request, context) => { asked = { request, context } })
    const result = ctx.tools.execute([{ id: 'c1', name: 'deploy', arguments: {} }], { session: caller })
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(asked.request.approvers).toEqual({ platform: 'discord', users: ['discord:42'] })
    expect(asked.context.respond({ decision: 'allow', by: { id: 'u1', platform: 'discord', authority: 5 } })).toBe('not-allowed')
    expect(asked.context.respond({ decision: 'allow', by: { id: '42', platform: 'discord' } })).toBe('accepted')
    expect((await result)[0]).toMatchObject({ status: 'ok', content: 'deployed' })
    await fiber.dispose()
  })
})
