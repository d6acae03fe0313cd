import { closed } from '@dogu/schema'
import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { defineTool, type Session, ToolRegistry, type ToolResult } from '../src'
import { type AskAnswer, type DecisionEvent, PermissionEngine, type PermissionEngineOptions, type PermissionRequest, type RespondStatus } from '../src/permissions'

const caller: Session = { id: 's1', userId: 'u1', platform: 'discord', authority: 1 }

interface Waiting {
  request: PermissionRequest
  respond(answer: AskAnswer): RespondStatus
}

/** `deploy` (write: asked) takes an env, a list of targets, free-form labels and a loose `extra`. */
function setup(options: PermissionEngineOptions = {}) {
  const decisions: DecisionEvent[] = []
  const engine = new PermissionEngine({ ...options, onDecision: (event) => decisions.push(event) })
  const registry = new ToolRegistry()
  registry.permissions = engine
  const runs: unknown[] = []
  registry.define(defineTool({
    name: 'deploy',
    description: 'Deploy the app',
    args: Schema.object({
      env: Schema.union(['staging', 'prod'] as const).required(),
      dryRun: Schema.boolean().default(false),
      targets: Schema.array(Schema.object({ host: Schema.string().required(), port: Schema.natural().default(443) })).default([]),
      labels: Schema.dict(Schema.string()).default({}),
      extra: Schema.any(),
      mode: Schema.union([Schema.object({ kind: Schema.const('rolling').required(), batch: Schema.natural() }), Schema.object({ kind: Schema.const('blue-green').required(), pool: Schema.string() })]),
      strict: closed(Schema.object({ region: Schema.string() })),
    }),
    traits: { effect: 'write' },
    permission: (args) => ({ name: 'deploy', target: args.env }),
    run: (args) => {
      runs.push(args)
      return `deployed ${args.env}`
    },
  }))
  const waiting: Waiting[] = []
  let notify: (() => void) | undefined
  engine.addAsker((request, context) => {
    waiting.push({ request, respond: context.respond })
    notify?.()
  })
  const asked = async (): Promise<Waiting> => {
    while (!waiting.length) await new Promise<void>((resolve) => { notify = resolve })
    return waiting.shift()!
  }
  const call = (args: object): Promise<ToolResult> =>
    registry.toolset({ session: caller }).execute([{ id: 'c1', name: 'deploy', arguments: args as Record<string, unknown> }]).then(([result]) => result)
  return { runs, decisions, asked, call }
}

/** The edit a person types in chat (`e {…}`): their fields over the call's arguments. */
const over = (request: PermissionRequest, changes: object) => ({ ...request.input!.initial as object, ...changes })

describe('an edit may set only the fields the schema names', () => {
  it('refuses a misspelled field, says which one it likely meant, and runs nothing until a real edit', async () => {
    const { call, asked, runs } = setup()
    const result = call({ env: 'prod' })
    const { request, respond } = await asked()
    // The attack: `Env` passes schemastery (it keeps unknown keys), and `prod` would run.
    const typo = over(request, { Env: 'staging' })
    expect(request.input!.check(typo)).toBe('the edited arguments set `Env` at $.Env, which is not a field of this tool\'s arguments — did you mean `env`? The fields there are: `env`, `dryRun`, `targets`, `labels`, `extra`, `mode`, `strict`.')
    expect(respond({ decision: 'allow', by: 'u1', value: typo })).toBe('invalid')
    expect(runs).toEqual([])
    expect(respond({ decision: 'allow', by: 'u1', value: over(request, { env: 'staging' }) })).toBe('accepted')
    expect((await result).content).toContain('deployed staging')
    expect(runs).toEqual([expect.objectContaining({ env: 'staging' })])
  })

  it('checks every depth: objects in arrays, union branches, closed objects; a dict and `any` take any key', async () => {
    const { call, asked, runs } = setup()
    const result = call({ env: 'prod', targets: [{ host: 'a' }], mode: { kind: 'rolling' } })
    const { request, respond } = await asked()
    expect(request.input!.check(over(request, { targets: [{ host: 'a', prot: 8443 }] }))).toMatch(/^the edited arguments set `prot` at \$\.targets\[0\]\.prot, .* did you mean `port`\?/)
    // A key neither branch of the union names; one that either names is a field.
    expect(request.input!.check(over(request, { mode: { kind: 'rolling', batches: 2 } }))).toMatch(/`batches` at \$\.mode\.batches, .*did you mean `batch`\?/)
    expect(request.input!.check(over(request, { strict: { regoin: 'eu' } }))).toMatch(/`regoin` at \$\.strict\.regoin, .*did you mean `region`\?/)
    expect(request.input!.check(over(request, { 'weird key': 1 }))).toMatch(/^the edited arguments set `weird key` at \$\["weird key"\], which is not a field/)
    const fine = over(request, { targets: [{ host: 'b', port: 8443 }], labels: { anything: 'x' }, extra: { free: { form: 1 } }, mode: { kind: 'rolling', batch: 2 } })
    expect(request.input!.check(fine)).toBeUndefined()
    expect(respond({ decision: 'allow', by: 'u1', value: fine })).toBe('accepted')
    await result
    expect(runs).toEqual([expect.objectContaining({ targets: [{ host: 'b', port: 8443 }], labels: { anything: 'x' }, extra: { free: { form: 1 } } })])
  })

  it('lets be a key the model sent that the edit leaves as it was, and refuses changing it', async () => {
    const { call, asked, runs } = setup()
    const result = call({ env: 'prod', note: 'from the model' })
    const { request, respond } = await asked()
    expect(request.input!.check(over(request, { note: 'changed' }))).toMatch(/`note` at \$\.note/)
    expect(respond({ decision: 'allow', by: 'u1', value: over(request, { env: 'staging' }) })).toBe('accepted')
    await result
    expect(runs).toEqual([expect.objectContaining({ env: 'staging', note: 'from the model' })])
  })

  it('shows the edited call as it will run: the decision carries its arguments with the schema\'s defaults', async () => {
    const { call, asked, decisions } = setup()
    const result = call({ env: 'prod', dryRun: true })
    const { request, respond } = await asked()
    // The person sends only the field they change; the defaults come back filled in.
    expect(request.input!.resolve!({ env: 'staging', targets: [{ host: 'a' }] })).toEqual({
      args: { env: 'staging', dryRun: false, targets: [{ host: 'a', port: 443 }], labels: {}, strict: {} },
      changes: ['$.env: "prod" → "staging"', '$.dryRun: true → false', '+ $.targets[0]: {"host":"a","port":443}'],
    })
    expect(request.input!.resolve!({ Env: 'staging' })).toEqual({ error: expect.stringContaining('did you mean `env`?'), refusal: expect.objectContaining({ kind: 'unknown_field', key: 'Env', suggestion: 'env' }) })
    respond({ decision: 'allow', by: 'u1', value: { env: 'staging' } })
    await result
    const approve = decisions.find((event) => event.phase === 'approve')!
    expect(approve.request.args).toEqual({ env: 'staging', dryRun: false, targets: [], labels: {}, strict: {} })
  })

  it('authorizes an edit that changes the target as its own call: a rule that denies the new target denies it', async () => {
    const { call, asked, runs } = setup({ rules: [{ permission: 'deploy', target: 'prod', decision: 'deny', name: 'no prod deploys' }] })
    const result = call({ env: 'staging' })
    const { request, respond } = await asked()
    expect(respond({ decision: 'allow', by: 'u1', value: over(request, { env: 'prod' }) })).toBe('accepted')
    const done = await result
    expect(done.status).toBe('denied')
    expect(done.content).toContain('no prod deploys')
    expect(runs).toEqual([])
  })
})
