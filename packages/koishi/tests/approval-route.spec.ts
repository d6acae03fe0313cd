// Where a chat question goes (`approvals.route`) and who is reached: a rule's approvers, the
// configured ones. The mock adapter has no private channels of its own: `createDirectChannel`
// is given one (`private:<user>`), as real adapters have, and the outbox sees what is sent there.
import { defineTool, type ToolResult } from '@dogu/core'
import { Schema } from 'koishi'
import { afterEach, describe, expect, it } from 'vitest'
import type { ChatApprovalsConfig } from '../src/chat-approvals'
import { type ChatApp, chatApp } from './chat-harness'

let t: ChatApp | undefined
afterEach(async () => {
  await t?.dispose()
  t = undefined
})

/** Deploys to prod are ops' to approve (the caller may not); `deploy` runs at once once allowed. */
async function setup(approvals: ChatApprovalsConfig, { askTimeout = 60_000, reachable = true } = {}) {
  t = await chatApp({
    approvals,
    permissions: { askTimeout, rules: [{ permission: 'tool:deploy', decision: 'ask', approvers: { users: ['ops'], caller: false } }] },
  })
  t.app.plugin({
    name: 'deploy-tool',
    inject: ['tools'],
    apply(ctx) {
      ctx.tools.define(defineTool({
        name: 'deploy',
        description: 'Deploy the current build',
        args: Schema.object({ env: Schema.string().required() }),
        traits: { effect: 'exec' },
        run: (args: { env: string }) => `deployed ${args.env}`,
      }))
    },
  })
  t.bot.createDirectChannel = async (userId: string) => {
    if (!reachable) throw new Error(`user ${userId} does not take private messages`)
    return { id: `private:${userId}`, type: 1 }
  }
  await t.settle()
  return t
}

const deploy = (): Promise<ToolResult> => t!.app.tools.execute([{ id: 'c1', name: 'deploy', arguments: { env: 'prod' } }], { session: t!.session('alice') }).then(([result]) => result)

/** The private chat of a user with the bot, as the mock adapter names it. */
const dm = (userId: string) => t!.app.mock.client(userId)

describe('approvals.route: where a question goes', () => {
  it('channel (the default): asks in the channel, mentioning the approvers; the caller\'s own y is not an answer', async () => {
    const { outbox, passed } = await setup({})
    const result = deploy()
    const question = await outbox.next()
    expect(question.channelId).toBe('room')
    expect(question.text).toContain('deploy(env=prod)')
    expect(question.text).toContain('请 @ops 审批。')
    expect(await t!.client('alice').receive('y')).toEqual([])
    expect(passed).toEqual(['alice: y'])
    expect(await t!.client('ops').receive('y')).toEqual(['已允许 [1] deploy(env=prod)（仅此一次）。'])
    expect((await result).content).toBe('deployed prod')
  })

  it('private: asks each approver privately, tells the channel who was asked, and takes the answer there', async () => {
    const { outbox } = await setup({ route: 'private' })
    const result = deploy()
    const question = await outbox.next()
    expect(question.channelId).toBe('private:ops')
    expect(question.text).toContain('deploy(env=prod)')
    const notice = await outbox.next()
    expect(notice).toMatchObject({ channelId: 'room', text: '已私信 @ops 请求批准：deploy(env=prod)' })
    // Nothing to answer in the channel.
    expect(await t!.client('ops').receive('y')).toEqual([])
    const decided = new Promise<unknown>((resolve) => t!.app.on('permissions/decision', (event) => { if (event.phase === 'approve') resolve(event.source) }))
    expect(await dm('ops').receive('y')).toEqual(['已允许 [1] deploy(env=prod)（仅此一次）。'])
    // The audit trail can tell how it was answered.
    expect(await decided).toMatchObject({ kind: 'answer', via: 'text', by: { id: 'ops', platform: 'mock' } })
    expect((await result).content).toBe('deployed prod')
    expect(outbox.unread).toEqual([])
  })

  it('both: the first answer wins, and the other copy closes with who answered', async () => {
    const { outbox } = await setup({ route: 'both' })
    const result = deploy()
    const copies = [await outbox.next(), await outbox.next()]
    expect(copies.map((copy) => copy.channelId)).toEqual(['private:ops', 'room'])
    expect(await dm('ops').receive('n')).toEqual(['已拒绝 [1] deploy(env=prod)。'])
    expect((await result).status).toBe('denied')
    expect(await outbox.next()).toMatchObject({ channelId: 'room', text: '[1] deploy(env=prod)：已由 mock:ops 处理（拒绝）。' })
    // Closed everywhere: a late answer in the channel is no answer.
    expect(await t!.client('ops').receive('y')).toEqual([])
  })

  it('both: a question that expires says so in every copy', async () => {
    const { outbox } = await setup({ route: 'both' }, { askTimeout: 300 })
    const result = deploy()
    await outbox.next()
    await outbox.next()
    expect((await result).content).toContain('timed out waiting for approval')
    const notices = [await outbox.next(), await outbox.next()]
    expect(notices.map(({ channelId, text }) => [channelId, text]).sort()).toEqual([
      ['private:ops', '[1] deploy(env=prod)：已超时，已拒绝。'],
      ['room', '[1] deploy(env=prod)：已超时，已拒绝。'],
    ])
  })

  it('reaches the configured approvers for questions an authority decides, on the bot\'s platform only', async () => {
    t = await chatApp({ approvals: { route: 'private', approvers: ['admin', 'discord:9', 'mock:ops'] } })
    t.bot.createDirectChannel = async (userId: string) => ({ id: `private:${userId}`, type: 1 })
    t.app.plugin({
      name: 'write-tool',
      inject: ['tools'],
      apply(ctx) {
        ctx.tools.define(defineTool({ name: 'save', description: 'Save', traits: { effect: 'write' }, run: () => 'saved' }))
      },
    })
    await t.settle()
    const result = t.app.tools.execute([{ id: 'c1', name: 'save', arguments: {} }], { session: t.session('alice') }).then(([r]) => r)
    const sent = [await t.outbox.next(), await t.outbox.next(), await t.outbox.next()]
    expect(sent.map((message) => message.channelId)).toEqual(['private:admin', 'private:ops', 'room'])
    expect(sent[2].text).toBe('已私信 @admin @ops 请求批准：save()')
    // ops (authority 3) was reached but may not answer an authority-4 question; admin may.
    expect(await dm('ops').receive('y')).toEqual([])
    expect(await dm('admin').receive('y')).toEqual(['已允许 [1] save()（仅此一次）。'])
    expect((await result).content).toBe('saved')
  })

  it('asks in the channel when no approver can be reached privately, and logs why', async () => {
    const { outbox, guard } = await setup({ route: 'private' }, { reachable: false })
    guard.expect(/cannot reach approver mock:ops privately for request perm_[\w-]+: Error: user ops does not take private messages/)
    const result = deploy()
    const question = await outbox.next()
    expect(question.channelId).toBe('room')
    expect(question.text).toContain('请 @ops 审批。')
    expect(await t!.client('ops').receive('y')).toEqual(['已允许 [1] deploy(env=prod)（仅此一次）。'])
    expect((await result).content).toBe('deployed prod')
  })
  it('takes an answer from someone holding the Koishi permission a rule names, and no one else\'s', async () => {
    t = await chatApp({ permissions: { rules: [{ permission: 'tool:deploy', decision: 'ask', approvers: { permissions: ['authority:3'], caller: false } }] } })
    t.app.plugin({
      name: 'deploy-tool',
      inject: ['tools'],
      apply(ctx) {
        ctx.tools.define(defineTool({ name: 'deploy', description: 'Deploy', args: Schema.object({ env: Schema.string().required() }), traits: { effect: 'exec' }, run: ({ env }: { env: string }) => `deployed ${env}` }))
      },
    })
    await t.settle()
    const result = deploy()
    await t.outbox.next()
    // alice (the caller) and bob hold authority 1: their y is conversation.
    expect(await t.client('alice').receive('y')).toEqual([])
    expect(await t.client('bob').receive('y')).toEqual([])
    // ops holds authority 3 in Koishi's user table, which `authority:3` tests.
    expect(await t.client('ops').receive('y')).toEqual(['已允许 [1] deploy(env=prod)（仅此一次）。'])
    expect((await result).content).toBe('deployed prod')
  })
})
