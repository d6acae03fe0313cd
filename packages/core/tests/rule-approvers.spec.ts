import { format } from 'node:util'
import { describe, expect, it } from 'vitest'
import type { AuthorizeRequest } from '../src/permission-gate'
import {
  type Approver,
  type AskAnswer,
  type Asker,
  describeApprovers,
  mayAnswer,
  PermissionEngine,
  type PermissionEngineOptions,
  type PermissionRequest,
  type PermissionRule,
} from '../src/permissions'

const caller = { id: 's1', userId: 'u1', platform: 'discord', authority: 1 }
const deploy: PermissionRule = { permission: 'tool:deploy', decision: 'ask', name: 'deploys' }

function request(over: Partial<AuthorizeRequest> = {}): AuthorizeRequest {
  return { session: caller, permission: { name: 'tool:deploy' }, effect: 'exec', tool: 'deploy', args: { env: 'prod' }, ...over }
}

/** An engine with one asker that records requests; `ask()` starts a request and answers it by turns. */
function setup(options: PermissionEngineOptions = {}) {
  const warnings: string[] = []
  const requests: PermissionRequest[] = []
  const responders: Array<(answer: AskAnswer) => string> = []
  const permissions = new PermissionEngine({
    logger: { debug() {}, warn: (text, ...args) => warnings.push(format(text, ...args)) },
    ...options,
  })
  const asker: Asker = (req, { respond }) => {
    requests.push(req)
    responders.push(respond)
  }
  permissions.addAsker(asker)
  const ask = (over: Partial<AuthorizeRequest> = {}) => {
    const outcome = permissions.approve({ ...request(over), callId: `c${requests.length + 1}` })
    const shown = requests.at(-1)!
    const respond = responders.at(-1)!
    return {
      outcome,
      shown,
      answer: (by: string | Approver, decision: 'allow' | 'deny' = 'allow', scope?: AskAnswer['scope']) => respond({ decision, by, ...(scope ? { scope } : {}) }),
    }
  }
  return { permissions, warnings, ask }
}

describe('rule approvers: who may answer the questions a rule asks', () => {
  it('lets a named user settle it, and refuses the excluded caller and a high-authority stranger', async () => {
    const { ask, warnings, permissions } = setup({ rules: [{ ...deploy, approvers: { users: ['ops1', 'discord:42'], caller: false } }] })
    const { outcome, shown, answer } = ask()
    expect(shown.approvers).toEqual({ platform: 'discord', users: ['ops1', 'discord:42'] })
    expect(Object.isFrozen(shown.approvers.users)).toBe(true)
    expect(answer({ id: 'u1', platform: 'discord', authority: 5 })).toBe('not-allowed')
    expect(answer({ id: 'root', platform: 'discord', authority: 99 })).toBe('not-allowed')
    expect(warnings.at(-1)).toContain('only users ops1, discord:42 may answer')
    // A plain id is that user on any platform; a qualified one only on its platform.
    expect(answer({ id: '42', platform: 'discord' })).toBe('accepted')
    expect(await outcome).toEqual({ decision: 'allow', reason: 'approved by discord:42 (once)', rule: expect.objectContaining({ kind: 'answer' }) })
    const second = ask()
    expect(second.answer({ id: 'ops1', platform: 'telegram' }, 'deny')).toBe('accepted')
    expect((await second.outcome).decision).toBe('deny')
    await permissions.stop()
  })

  it('keeps the caller among the approvers unless the rule or the engine leaves them out', async () => {
    const { ask, permissions } = setup({ rules: [{ ...deploy, approvers: { users: ['ops1'] } }] })
    const { outcome, shown, answer } = ask()
    expect(shown.approvers).toEqual({ userId: 'u1', platform: 'discord', users: ['ops1'] })
    expect(answer({ id: 'u1', platform: 'discord' })).toBe('accepted')
    expect((await outcome).decision).toBe('allow')
    await permissions.stop()
    // The engine's callerMayApprove: false is the default the rule inherits; caller: true overrides it.
    const strict = setup({ approvers: { caller: false }, rules: [
      { ...deploy, approvers: { users: ['ops1'] } },
      { permission: 'tool:plan', decision: 'ask', approvers: { users: ['ops1'], caller: true } },
    ] })
    expect(strict.ask().shown.approvers).toEqual({ platform: 'discord', users: ['ops1'] })
    const plan = strict.ask({ tool: 'plan', permission: { name: 'tool:plan' } })
    expect(plan.shown.approvers).toEqual({ userId: 'u1', platform: 'discord', users: ['ops1'] })
    expect(plan.answer('u1')).toBe('accepted')
    await strict.permissions.stop()
  })

  it('takes an authority level in place of the engine\'s', async () => {
    const { ask, permissions } = setup({ rules: [{ ...deploy, approvers: { authority: 2, caller: false } }] })
    const { outcome, shown, answer } = ask()
    expect(shown.approvers).toEqual({ platform: 'discord', authority: 2 })
    expect(answer({ id: 'u1', platform: 'discord', authority: 1 })).toBe('not-allowed')
    expect(answer({ id: 'u9', authority: 1 })).toBe('not-allowed')
    expect(answer({ id: 'u9', authority: 2 })).toBe('accepted')
    expect((await outcome).decision).toBe('allow')
    await permissions.stop()
  })

  it('accepts a holder of a host permission the asker attests, and not one it does not list', async () => {
    const { ask, permissions, warnings } = setup({ rules: [{ ...deploy, approvers: { permissions: ['dogu.ops', 'authority:3'], caller: false } }] })
    const { outcome, shown, answer } = ask()
    expect(shown.approvers).toEqual({ platform: 'discord', permissions: ['dogu.ops', 'authority:3'] })
    expect(answer({ id: 'u7', platform: 'discord', permissions: ['dogu.guest'], authority: 5 })).toBe('not-allowed')
    expect(warnings.at(-1)).toContain('only holders of dogu.ops, authority:3 may answer')
    expect(answer({ id: 'u7', platform: 'discord', permissions: 'dogu.ops' as never })).toBe('invalid')
    expect(answer({ id: 'u8', platform: 'discord', permissions: ['dogu.ops'] })).toBe('accepted')
    expect(await outcome).toEqual({ decision: 'allow', reason: 'approved by discord:u8 (once)', rule: expect.objectContaining({ kind: 'answer' }) })
    await permissions.stop()
  })

  it('counts any one of users, permissions and authority', async () => {
    const { ask, permissions } = setup({ rules: [{ ...deploy, approvers: { users: ['ops1'], permissions: ['dogu.ops'], authority: 5, caller: false } }] })
    const policy = ask().shown.approvers
    expect(policy).toEqual({ platform: 'discord', users: ['ops1'], permissions: ['dogu.ops'], authority: 5 })
    expect(mayAnswer(policy, { id: 'ops1' })).toBe(true)
    expect(mayAnswer(policy, { id: 'x', permissions: ['dogu.ops'] })).toBe(true)
    expect(mayAnswer(policy, { id: 'x', authority: 5 })).toBe(true)
    expect(mayAnswer(policy, { id: 'x', authority: 4, permissions: ['dogu.guest'] })).toBe(false)
    expect(mayAnswer(policy, { id: 'u1', platform: 'discord' })).toBe(false)
    await permissions.stop()
  })

  it('lets caller: false alone keep the engine\'s authority and only take the caller out', async () => {
    const { ask, permissions } = setup({ rules: [{ ...deploy, approvers: { caller: false } }] })
    const { outcome, shown, answer } = ask()
    expect(shown.approvers).toEqual({ platform: 'discord', authority: 4 })
    expect(answer({ id: 'u1', platform: 'discord', authority: 1 })).toBe('not-allowed')
    expect(answer({ id: 'admin', authority: 4 })).toBe('accepted')
    expect((await outcome).decision).toBe('allow')
    await permissions.stop()
  })

  it('leaves requests without rule approvers exactly as before: default asks, tool asks, empty approvers', async () => {
    const { ask, permissions, warnings } = setup({ rules: [
      { permission: 'tool:plan', decision: 'ask', approvers: { users: [], permissions: [] } },
      { permission: 'tool:lint', decision: 'allow', approvers: { users: [], permissions: [] } },
      { permission: 'tool:deploy', decision: 'ask', approvers: { users: ['ops1'] } },
    ] })
    const before = { userId: 'u1', platform: 'discord', authority: 4 }
    expect(ask({ tool: 'x', permission: { name: 'tool:x' } }).shown.approvers).toEqual(before)
    expect(ask({ tool: 'plan', permission: { name: 'tool:plan' } }).shown.approvers).toEqual(before)
    // A tool's own call.ask() has no rule: the engine's approvers, even where a rule names some.
    const own = permissions.approve({ ...request(), callId: 'own', reason: 'deletes 3 files' })
    const { answer } = ask({ tool: 'x', permission: { name: 'tool:x' } })
    expect(answer({ id: 'stranger', authority: 3 })).toBe('not-allowed')
    expect(warnings.at(-1)).toContain('only the caller (discord:u1) or users with authority ≥ 4 may answer')
    void own
    expect(permissions.authorize(request({ tool: 'lint', permission: { name: 'tool:lint' } })).decision).toBe('allow')
    await permissions.stop()
  })

  it('refuses an attested permission when the policy names none, and a qualified id from another platform', () => {
    const engineDefault = { userId: 'u1', platform: 'discord', authority: 4 }
    expect(mayAnswer(engineDefault, { id: 'eve', permissions: ['authority:4', 'dogu.ops'], authority: 3 })).toBe(false)
    const qualified = { platform: 'discord', users: ['discord:42'] }
    expect(mayAnswer(qualified, { id: '42', platform: 'telegram' })).toBe(false)
    // Without a platform, a qualified id cannot be told from the same id elsewhere.
    expect(mayAnswer(qualified, { id: '42' })).toBe(false)
    expect(mayAnswer(qualified, { id: '42', platform: 'discord' })).toBe(true)
    // The caller's own id on another platform is not the caller.
    expect(mayAnswer({ userId: '42', platform: 'discord', users: ['ops'] }, { id: '42', platform: 'telegram' })).toBe(false)
    expect(mayAnswer({}, { id: 'anyone', authority: 1e9, permissions: ['*'] })).toBe(false)
    expect(describeApprovers({})).toBe('nobody')
  })

  it('rejects bad approvers with an error naming the field and the rule', () => {
    const bad = (approvers: unknown, decision: PermissionRule['decision'] = 'ask') => () => new PermissionEngine({ rules: [{ permission: 'tool:deploy', decision, approvers } as PermissionRule] })
    const message = (text: string) => expect.objectContaining({ code: 'INVALID_RULE', message: `config.rules[0]: ${text}` })
    expect(bad('ops')).toThrow(message('"approvers" must be an object like { users, authority, permissions, caller } when set, got "ops"'))
    expect(bad(['ops'])).toThrow(message('"approvers" must be an object like { users, authority, permissions, caller } when set, got ["ops"]'))
    expect(bad({ user: ['ops'] })).toThrow(message('unknown field "approvers.user" (known: users, authority, permissions, caller)'))
    expect(bad({ users: 'ops' })).toThrow(message('"approvers.users" must be an array of non-empty strings when set, got "ops"'))
    expect(bad({ permissions: [''] })).toThrow(message('"approvers.permissions" must be an array of non-empty strings when set, got [""]'))
    expect(bad({ authority: '3' })).toThrow(message('"approvers.authority" must be a number ≥ 0 when set, got "3"'))
    expect(bad({ authority: -1 })).toThrow(message('"approvers.authority" must be a number ≥ 0 when set, got -1'))
    expect(bad({ caller: 'no' })).toThrow(message('"approvers.caller" must be true or false when set, got "no"'))
    expect(bad({ users: ['ops'] }, 'allow')).toThrow(message('"approvers" applies only to ask rules (they decide who may answer the question), not to a "allow" rule'))
    expect(bad({ caller: false }, 'deny')).toThrow(message('"approvers" applies only to ask rules (they decide who may answer the question), not to a "deny" rule'))
    const engine = new PermissionEngine()
    expect(() => engine.addRule({ ...deploy, approvers: { authority: Number.NaN } }, 'plugin "ops"')).toThrow(expect.objectContaining({
      code: 'INVALID_RULE', message: 'plugin "ops": "approvers.authority" must be a number ≥ 0 when set, got null',
    }))
  })

  it('freezes a rule\'s approvers, so an asker cannot widen them through request.asked', async () => {
    const rule: PermissionRule = { ...deploy, approvers: { users: ['ops1'], caller: false } }
    const { ask, permissions } = setup({ rules: [rule] })
    const { shown, answer } = ask()
    const seen = shown.asked?.kind === 'rule' ? shown.asked.rule.approvers : undefined
    expect(seen).toEqual({ users: ['ops1'], caller: false })
    expect(Object.isFrozen(seen)).toBe(true)
    expect(Object.isFrozen(seen!.users)).toBe(true)
    // The config object itself can change later without changing the rule in force.
    rule.approvers!.users!.push('mallory')
    expect(answer({ id: 'mallory' })).toBe('not-allowed')
    expect(ask().shown.approvers.users).toEqual(['ops1'])
    await permissions.stop()
  })
  it('asks a rule\'s own approvers every time: a grant the caller gave before does not cover it, and their "always" counts once', async () => {
    const { ask, permissions } = setup()
    const prod = { permission: { name: 'tool:deploy', target: 'prod' } }
    // Under the effect default, the caller approves their own prod deploy "always".
    const first = ask(prod)
    expect(first.answer({ id: 'u1', platform: 'discord' }, 'allow', 'always')).toBe('accepted')
    await first.outcome
    expect(permissions.authorize(request(prod)).decision).toBe('allow')
    // Then the owner sends prod deploys to ops: the caller's grant is not ops' answer.
    permissions.addRule({ ...deploy, target: 'prod', approvers: { users: ['ops1'], caller: false } })
    expect(permissions.authorize(request(prod)).decision).toBe('ask')
    const second = ask(prod)
    expect(second.shown.confirm).toBe('always')
    expect(second.answer({ id: 'ops1' }, 'allow', 'always')).toBe('accepted')
    expect(await second.outcome).toEqual({ decision: 'allow', reason: 'approved by ops1 (once)', rule: expect.objectContaining({ kind: 'answer' }) })
    // Nothing new was remembered: the next prod deploy is asked of ops again.
    expect(permissions.authorize(request(prod)).decision).toBe('ask')
    await permissions.stop()
  })
})
