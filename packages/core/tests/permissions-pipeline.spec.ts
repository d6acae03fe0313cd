import Schema from 'schemastery'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { defineTool, type Session, ToolRegistry, type ToolResult } from '../src'
import { type AskAnswer, type DecisionEvent, PermissionEngine, type PermissionEngineOptions, type PermissionRequest } from '../src/permissions'

const user: Session = { id: 's1', userId: 'u1', platform: 'discord', authority: 1 }
const admin: Session = { id: 's2', userId: 'a1', platform: 'discord', authority: 4 }

/** A registry with a deploy tool (permission from its args), a reader, a writer and a payer. */
function setup(options: PermissionEngineOptions = {}) {
  const events: DecisionEvent[] = []
  const engine = new PermissionEngine({ onDecision: (event) => events.push(event), ...options })
  const registry = new ToolRegistry()
  registry.permissions = engine
  const runs: string[] = []
  registry.define(defineTool({
    name: 'deploy',
    description: 'Deploy the current build',
    args: Schema.object({ env: Schema.union(['staging', 'prod']).required() }),
    permission: (args) => ({ name: 'deploy:run', target: args.env }),
    traits: { effect: 'exec' },
    run: (args) => {
      runs.push(`deploy ${args.env}`)
      return `deployed ${args.env}`
    },
  }))
  registry.define(defineTool({ name: 'read', description: 'Read', traits: { effect: 'read' }, run: () => 'read ok' }))
  registry.define(defineTool({ name: 'write', description: 'Write', traits: { effect: 'write' }, run: () => 'write ok' }))
  registry.define(defineTool({
    name: 'pay',
    description: 'Pay',
    args: Schema.object({ cents: Schema.natural().required() }),
    confirm: 'always',
    run: (args) => `paid ${args.cents}`,
  }))
  registry.define(defineTool({
    name: 'clean',
    description: 'Delete build outputs',
    traits: { effect: 'read' },
    run: async (_, call) => {
      await call.ask('delete 3 files in build/')
      return 'cleaned'
    },
  }))
  registry.define(defineTool({
    name: 'guarded',
    description: 'Refuses on its own',
    traits: { effect: 'read' },
    run: (_, call) => call.deny('the repository is locked'),
  }))
  const call = async (session: Session, name: string, args: object = {}, signal?: AbortSignal): Promise<ToolResult> =>
    (await registry.toolset({ session }).execute([{ id: `c-${name}`, name, arguments: args as Record<string, unknown> }], { signal }))[0]
  return { engine, registry, events, runs, call }
}

/** An asker the test answers by hand. */
function asker(engine: PermissionEngine) {
  const requests: PermissionRequest[] = []
  const respond: Array<(answer: AskAnswer) => string> = []
  engine.addAsker((request, context) => {
    requests.push(request)
    respond.push(context.respond)
  })
  const next = async () => {
    while (respond.length < requests.length || !requests.length) await new Promise((resolve) => setTimeout(resolve, 0))
  }
  return { requests, respond, next }
}

afterEach(() => {
  vi.useRealTimers()
})

describe('permissions in the pipeline', () => {
  it('decides on the permission a tool computes from its arguments: admins deploy prod, others are asked', async () => {
    const { call, events, runs } = setup({ rules: [
      { permission: 'deploy:run', target: 'prod', authority: 4, decision: 'allow', name: 'admins deploy prod' },
      { permission: 'deploy:run', target: 'staging', decision: 'allow' },
    ] })
    expect(await call(admin, 'deploy', { env: 'prod' })).toMatchObject({ status: 'ok', content: 'deployed prod' })
    expect(await call(user, 'deploy', { env: 'staging' })).toMatchObject({ status: 'ok' })
    expect(await call(user, 'read')).toMatchObject({ status: 'ok' })
    const denied = await call(user, 'deploy', { env: 'prod' })
    expect(denied).toMatchObject({ status: 'denied', code: 'permission_denied' })
    expect(denied.content).toBe('Permission denied: it needs a person\'s approval (no rule matches; exec tools need approval by default), but no asker is registered to ask anyone: register one with ctx.permissions.asker(...) (see docs/permissions.md)')
    expect(events.map((e) => [e.phase, e.request.permission, e.decision, e.source.kind])).toEqual([
      ['authorize', { name: 'deploy:run', target: 'prod' }, 'allow', 'rule'],
      ['authorize', { name: 'deploy:run', target: 'staging' }, 'allow', 'rule'],
      ['authorize', { name: 'tool:read' }, 'allow', 'default'],
      ['authorize', { name: 'deploy:run', target: 'prod' }, 'ask', 'default'],
      ['approve', { name: 'deploy:run', target: 'prod' }, 'deny', 'no-asker'],
    ])
    expect(events[0].source).toMatchObject({ rule: { name: 'admins deploy prod' }, origin: 'config.rules[0]' })
    expect(runs).toEqual(['deploy prod', 'deploy staging'])
  })

  it('runs an asked call once approved, and reports a declined one as denied with the reason', async () => {
    const { engine, call } = setup()
    const manual = asker(engine)
    const first = call(user, 'deploy', { env: 'prod' })
    await manual.next()
    expect(manual.requests[0]).toMatchObject({ tool: 'deploy', summary: 'deploy(env=prod) — deploy:run "prod"', permission: { name: 'deploy:run', target: 'prod' }, callId: 'c-deploy' })
    manual.respond[0]({ decision: 'allow', by: 'u1' })
    expect(await first).toMatchObject({ status: 'ok', content: 'deployed prod' })
    const second = call(user, 'deploy', { env: 'prod' })
    await new Promise((resolve) => setTimeout(resolve, 0))
    manual.respond[1]({ decision: 'deny', by: 'u1', reason: 'not today' })
    expect(await second).toMatchObject({ status: 'denied', content: 'Permission denied: u1 declined it: not today' })
  })

  it('asks again for other arguments after a once answer, and never for a session grant in the same session', async () => {
    const { engine, call } = setup()
    const manual = asker(engine)
    const prod = call(user, 'deploy', { env: 'prod' })
    await manual.next()
    manual.respond[0]({ decision: 'allow', scope: 'session', by: 'u1' })
    expect((await prod).status).toBe('ok')
    expect((await call(user, 'deploy', { env: 'prod' })).status).toBe('ok')
    expect(manual.requests).toHaveLength(1)
    // Another session of the same user is asked: the grant does not leak.
    const elsewhere = call({ ...user, id: 's9' }, 'deploy', { env: 'prod' })
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(manual.requests).toHaveLength(2)
    manual.respond[1]({ decision: 'allow', scope: 'once', by: 'u1' })
    expect((await elsewhere).status).toBe('ok')
    const staging = call(user, 'deploy', { env: 'staging' })
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(manual.requests.map((r) => r.summary)).toEqual(['deploy(env=prod) — deploy:run "prod"', 'deploy(env=prod) — deploy:run "prod"', 'deploy(env=staging) — deploy:run "staging"'])
    manual.respond[2]({ decision: 'deny', by: 'u1' })
    expect((await staging).status).toBe('denied')
  })

  it('asks every time for a confirm: always tool, grants notwithstanding', async () => {
    const { engine, call } = setup()
    const answers: string[] = []
    engine.addAsker(async (request) => {
      answers.push(request.summary)
      return { decision: 'allow', scope: 'always', by: 'u1' }
    })
    expect(await call(user, 'pay', { cents: 500 })).toMatchObject({ status: 'ok', content: 'paid 500' })
    expect(await call(user, 'pay', { cents: 500 })).toMatchObject({ status: 'ok' })
    expect(answers).toEqual(['pay(cents=500)', 'pay(cents=500)'])
    expect(engine.grants()).toEqual([])
  })

  it('suspends a run on call.ask until a person answers, and ends it denied on refusal', async () => {
    const { engine, call } = setup({ mode: 'trust' })
    const manual = asker(engine)
    const first = call(user, 'clean')
    await manual.next()
    expect(manual.requests[0]).toMatchObject({ tool: 'clean', reason: 'delete 3 files in build/', confirm: 'always' })
    manual.respond[0]({ decision: 'allow', scope: 'always', by: 'u1' })
    expect(await first).toMatchObject({ status: 'ok', content: 'cleaned' })
    expect(engine.grants()).toEqual([])
    const second = call(user, 'clean')
    await new Promise((resolve) => setTimeout(resolve, 0))
    manual.respond[1]({ decision: 'deny', by: 'u1' })
    expect(await second).toMatchObject({ status: 'denied', code: 'permission_denied', content: 'Permission denied: u1 declined it' })
  })

  it('ends a call denied on call.deny', async () => {
    const { call } = setup()
    expect(await call(user, 'guarded')).toMatchObject({ status: 'denied', content: 'Permission denied: the repository is locked' })
  })

  it('ignores a spoofed approval and runs only on the caller\'s answer', async () => {
    const { engine, call, runs } = setup()
    const manual = asker(engine)
    const pending = call(user, 'deploy', { env: 'prod' })
    await manual.next()
    expect(manual.respond[0]({ decision: 'allow', scope: 'always', by: { id: 'u2', platform: 'discord', authority: 1 } })).toBe('not-allowed')
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(runs).toEqual([])
    expect(manual.respond[0]({ decision: 'allow', by: { id: 'u1', platform: 'discord' } })).toBe('accepted')
    expect((await pending).status).toBe('ok')
    expect(engine.grants()).toEqual([])
  })

  it('denies on ask timeout without hanging the call', async () => {
    vi.useFakeTimers()
    const { engine, call } = setup({ askTimeout: 10_000 })
    engine.addAsker(() => {})
    const pending = call(user, 'write')
    await vi.advanceTimersByTimeAsync(10_000)
    expect(await pending).toMatchObject({ status: 'denied', content: 'Permission denied: timed out waiting for approval (no answer within 10s)' })
  })

  it('cancels the pending request when the batch is cancelled', async () => {
    const { engine, call } = setup()
    const manual = asker(engine)
    const controller = new AbortController()
    const pending = call(user, 'write', {}, controller.signal)
    await manual.next()
    controller.abort()
    // The request is withdrawn, and the call ends as what happened to it: cancelled.
    expect(await pending).toMatchObject({ status: 'cancelled', content: 'Cancelled: the batch was cancelled.' })
    expect(engine.pending()).toEqual([])
    expect(manual.respond[0]({ decision: 'allow', by: 'u1' })).toBe('closed')
  })

  it('fails closed without a permission service: read runs, everything else is denied saying why', async () => {
    const { registry, call } = setup()
    registry.permissions = undefined
    expect(await call(user, 'read')).toMatchObject({ status: 'ok' })
    expect(await call(user, 'write')).toMatchObject({ status: 'denied', code: 'no_permission_service' })
    expect((await call(user, 'clean')).content).toContain('no permission service is loaded')
  })

  it('ends waiting calls denied with a reason when the engine stops', async () => {
    const { engine, call } = setup()
    const manual = asker(engine)
    const waiting = [call(user, 'write'), call(admin, 'deploy', { env: 'prod' })]
    await manual.next()
    while (manual.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 0))
    await engine.stop('the permissions service was reloaded')
    for (const result of await Promise.all(waiting)) {
      expect(result).toMatchObject({ status: 'denied', content: 'Permission denied: the permissions service was reloaded' })
    }
  })

  it('applies modes to real calls: readOnly denies a write, acceptEdits allows it', async () => {
    const { engine, call } = setup()
    engine.setMode('s1', 'readOnly')
    expect(await call(user, 'write')).toMatchObject({ status: 'denied', content: 'Permission denied: the session is in readOnly mode, which denies write tools' })
    expect((await call(user, 'read')).status).toBe('ok')
    engine.setMode('s1', 'acceptEdits')
    expect((await call(user, 'write')).status).toBe('ok')
  })
})

describe('call.mode and sandboxed permissions in the pipeline', () => {
  /** A registry whose `shell` tool records the mode its `permission()` and `run()` see. */
  function shellSetup() {
    const engine = new PermissionEngine()
    const registry = new ToolRegistry()
    registry.permissions = engine
    const seen: string[] = []
    let release: (() => void) | undefined
    registry.define(defineTool({
      name: 'shell',
      description: 'Run a command',
      args: Schema.object({ command: Schema.string().required(), hold: Schema.boolean() }),
      permission: (args, call) => {
        seen.push(`permission ${call.mode}`)
        return { name: 'shell', target: args.command }
      },
      // `read` here so readOnly mode lets it run and the test can see the mode in run().
      traits: { effect: 'read' },
      run: async (args, call) => {
        if (args.hold) await new Promise<void>((resolve) => { release = resolve })
        seen.push(`run ${call.mode}`)
        return `ran ${args.command}`
      },
    }))
    const call = async (command: string, extra: object = {}): Promise<ToolResult> =>
      (await registry.toolset({ session: user }).execute([{ id: 'c1', name: 'shell', arguments: { command, ...extra } }]))[0]
    return { engine, registry, seen, call, release: () => release?.() }
  }

  it('hands permission() and run() the session\'s mode, as setMode set it', async () => {
    const { engine, seen, call } = shellSetup()
    expect((await call('ls')).status).toBe('ok')
    engine.setMode(user.id, 'readOnly')
    expect((await call('ls')).status).toBe('ok')
    engine.setMode(user.id, 'trust')
    expect((await call('ls')).status).toBe('ok')
    expect(seen).toEqual(['permission default', 'run default', 'permission readOnly', 'run readOnly', 'permission trust', 'run trust'])
  })

  it('keeps the mode the call started with when the session\'s mode changes meanwhile', async () => {
    const { engine, seen, call, release } = shellSetup()
    engine.setMode(user.id, 'readOnly')
    const running = call('ls', { hold: true })
    while (!seen.length) await new Promise((resolve) => setTimeout(resolve, 0))
    engine.setMode(user.id, 'trust')
    await new Promise((resolve) => setTimeout(resolve, 0))
    release()
    expect((await running).status).toBe('ok')
    expect(seen).toEqual(['permission readOnly', 'run readOnly'])
  })

  it('is default without a permission service, and with a gate that has no modeOf', async () => {
    const { registry, seen, call } = shellSetup()
    registry.permissions = undefined
    expect((await call('ls')).status).toBe('ok')
    registry.permissions = { authorize: () => ({ decision: 'allow' }), approve: async () => ({ decision: 'allow' }) }
    expect((await call('ls')).status).toBe('ok')
    // A faulty modeOf does not break the call: it runs under `default`, the gate still decides.
    registry.permissions = { authorize: () => ({ decision: 'allow' }), approve: async () => ({ decision: 'allow' }), modeOf: () => { throw new Error('boom') } }
    expect((await call('ls')).status).toBe('ok')
    expect(seen).toEqual(['permission default', 'run default', 'permission default', 'run default', 'permission default', 'run default'])
  })

  it('lets a sandboxed: true rule allow an exec call whose tool says it runs sandboxed; an unflagged one is asked', async () => {
    const engine = new PermissionEngine({ rules: [{ permission: 'shell', sandboxed: true, decision: 'allow' }] })
    const registry = new ToolRegistry()
    registry.permissions = engine
    const manual = asker(engine)
    for (const sandboxed of [true, false, undefined]) {
      registry.define(defineTool({
        name: `shell_${sandboxed}`,
        description: 'Run a command',
        permission: () => (sandboxed === undefined ? { name: 'shell' } : { name: 'shell', sandboxed }),
        traits: { effect: 'exec' },
        run: () => 'ran',
      }))
    }
    const run = async (name: string) => (await registry.toolset({ session: user }).execute([{ id: name, name, arguments: {} }]))[0]
    expect(await run('shell_true')).toMatchObject({ status: 'ok', content: 'ran' })
    expect(manual.requests).toEqual([])
    for (const name of ['shell_false', 'shell_undefined']) {
      const pending = run(name)
      await manual.next()
      expect(manual.requests.at(-1)).toMatchObject({ tool: name })
      manual.respond.at(-1)!({ decision: 'deny', by: 'u1' })
      expect(await pending).toMatchObject({ status: 'denied' })
      manual.requests.length = 0
      manual.respond.length = 0
    }
  })
})
