import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { logGuard } from '../../test-support/log-guard'
import { type InstalledOtel, installOtel } from '../../test-support/otel'
import { FRAMEWORK_VIA } from './approvers'
import { expectHarnessWarnings } from './expected-logs'
import { checkAudit, checkResults, checkSecrets, checkWhatRan, checkWrites, checkWrittenAsPreviewed, type Violation } from './invariants'
import { cleanUp, runScenario, type RunOutcome } from './run-scenario'
import type { HostName, HostSpec, SandboxSpec, Scenario } from './scenario'

// Each counterexample the harness found, shrunk, as a named case (docs/invariants.md lists
// them with the seed that found them), on both hosts; and the chat's and the console's
// channels with the attacks of issue 43 that reach them.

let otel: InstalledOtel
beforeAll(() => { otel = installOtel() })
afterAll(() => otel.uninstall())

const base: Scenario = { mode: 'default', rules: [], repair: true, answer: { kind: 'deny' }, middleware: 'none', quotas: [], maxRecords: 10_000, cancelBefore: false, calls: [], flood: 0, tamper: 'none', undo: 'none' }

async function run(host: HostName | HostSpec, scenario: Partial<Scenario>, check: (outcome: RunOutcome) => Violation[], sandbox?: SandboxSpec) {
  expectHarnessWarnings(logGuard)
  const spec: HostSpec = typeof host === 'string' ? { name: host, approver: 'asker', console: false } : host
  const outcome = await runScenario(spec, { ...base, ...scenario }, otel, sandbox)
  try {
    return { outcome, violations: check(outcome) }
  } finally {
    await cleanUp(outcome)
  }
}

describe.each(['cordis', 'koishi'] as const)('%s: counterexamples of issue 43', (host) => {
  // seeds 43 and 4343 (I3): host-free createFsTools() protected nothing, so trust mode wrote
  // .env, acceptEdits wrote .git/config, and a person's "allow" wrote .env.
  it.each([
    ['trust mode', 'trust', '.env', { kind: 'deny' }],
    ['acceptEdits', 'acceptEdits', '.git/config', { kind: 'silent' }],
    ['a person\'s approval', 'default', '.env', { kind: 'allow', scope: 'once' }],
  ] as const)('a write to a protected path allowed by %s leaves it as it was (fs tools\' host-free defaults protect it)', async (_, mode, path, answer) => {
    const { violations } = await run(host, { mode, answer, calls: [{ id: 'c0', tool: 'write', arguments: { path, content: 'alpha' } }] }, checkWrites)
    expect(violations).toEqual([])
  })

  // seed 43 (I2): the validation error quoted the secret it refused.
  it('a secret that fails validation is not echoed by the error the model, the events or the audit log see', async () => {
    const { outcome, violations } = await run(host, { calls: [{ id: 'c0', tool: 'deploy', arguments: { env: 'staging', token: 'pk-live-aaa000aaaa', ref: 'alpha' } }] }, checkSecrets)
    expect(outcome.observations.results[0]).toMatchObject({ status: 'error', code: 'invalid_arguments' })
    expect(violations).toEqual([])
  })

  // seed 43, 150 runs (I2): `repaired.from` held the raw text, secret and all, in every channel.
  it('a repaired call with a secret field shows the secret to no asker, event, result or audit record', async () => {
    const { outcome, violations } = await run(host, {
      answer: { kind: 'allow', scope: 'once' },
      calls: [{ id: 'c0', tool: 'deploy', arguments: "{'env':'staging','token':'sk-live-9d7b3e3e7a','ref':'x',}" }],
    }, checkSecrets)
    expect(outcome.observations.results[0]).toMatchObject({ status: 'ok', repaired: { steps: expect.arrayContaining(['quotes']) } })
    expect(violations).toEqual([])
  })

  // seed 43 (I5): ten calls to an unknown tool pushed an asked call's record out of maxRecords: 8.
  it('calls nobody authorized do not evict the record of a call that was asked', async () => {
    const { violations } = await run(host, { answer: { kind: 'silent' }, maxRecords: 8, flood: 10, calls: [{ id: 'c0', tool: 'note', arguments: { text: 'alpha', count: 1 } }] }, checkAudit)
    expect(violations).toEqual([])
  })

  // fc.sample seed 5 (I5): two calls under the model's same id, run one after the other
  // (maxRunning), and the second record lost its `decided`.
  it('two calls under one model call id get one record each, both with their decision', async () => {
    const { outcome, violations } = await run(host, {
      mode: 'readOnly',
      middleware: 'end',
      maxRunning: { session: 1 },
      calls: [
        { id: 'c0', tool: 'nope', arguments: {} },
        { id: 'c1', tool: 'peek', arguments: { q: 'alpha' } },
        { id: 'c0', tool: 'peek', arguments: { q: 'alpha' } },
        { id: 'c1', tool: 'peek', arguments: { q: 'x' } },
      ],
    }, checkAudit)
    expect(outcome.observations.results.map((result) => result.status)).toEqual(['error', 'ok', 'ok', 'ok'])
    expect(violations).toEqual([])
  })

  // Issue 43 item 2, as the harness's edit dimension makes it: `e {"Env":"staging"}`.
  it('an edit with a misspelled field is refused, and the original call does not run', async () => {
    const { outcome, violations } = await run(host, {
      answer: { kind: 'edit', edit: 'unknown-key' },
      calls: [{ id: 'c0', tool: 'deploy', arguments: { env: 'prod', token: 'sk-live-0123456789', ref: 'main' } }],
    }, (outcome) => [...checkWhatRan(outcome), ...checkResults(outcome)])
    expect(outcome.observations.approver).toMatchObject([{ answer: 'edit', verdict: 'invalid' }])
    expect(outcome.runs).toEqual([])
    expect(violations).toEqual([])
  })
})

describe('Cordis 4 with bash: counterexamples of issue 43', () => {
  // seed 4301 (I3): a sandboxed command has effect write; trust (or acceptEdits) ran it, and it wrote .git/config.
  it.each([
    ['trust mode', { mode: 'trust' as const }],
    ['acceptEdits', { mode: 'acceptEdits' as const }],
    ['the documented rule { permission: shell, sandboxed: true, decision: allow }', { rules: [{ permission: 'shell', sandboxed: true, decision: 'allow' as const }] }],
  ])('a sandboxed command allowed by %s cannot write .git/config', async (_, scenario) => {
    const { violations } = await run('cordis', { ...scenario, calls: [{ id: 'c0', tool: 'bash', arguments: { command: 'echo x >> .git/config' } }] }, checkWrites, { sandbox: 'full', network: 'none' })
    expect(violations).toEqual([])
  })

  it('a sandboxed command cannot create a nested .git or a .env.* file', async () => {
    const { violations } = await run('cordis', {
      mode: 'trust',
      calls: [
        { id: 'c0', tool: 'bash', arguments: { command: 'mkdir -p deep/.git && echo z > deep/.git/config' } },
        { id: 'c1', tool: 'bash', arguments: { command: 'echo y > .env.production' } },
      ],
    }, checkWrites, { sandbox: 'full', network: 'none' })
    expect(violations).toEqual([])
  })
})

const CHAT: HostSpec = { name: 'koishi', approver: 'chat', console: false }
const CONSOLE: HostSpec = { name: 'cordis', approver: 'asker', console: true }
const asked = [
  ['Cordis 4', { name: 'cordis', approver: 'asker', console: false }],
  ['Koishi 4', { name: 'koishi', approver: 'asker', console: false }],
  ['Koishi 4, asked in chat', CHAT],
] as const satisfies readonly (readonly [string, HostSpec])[]
const STALE = /changed on disk after the change was shown for approval/

describe.each(asked)('%s: previews and undo (issue 43 items 11 and 6)', (_, host) => {
  // seed 1143, run 18 (I1), on the fs tools before f0b6438: the person was shown "a", a
  // third party added a line before the answer, and the approved call wrote over it.
  it.each([
    ['write', { path: 'a.txt', content: 'alpha' }],
    ['edit', { path: 'a.txt', oldText: 'a', newText: 'alpha' }],
  ])('a %s whose file a third party changed between the question and the answer ends STALE and writes nothing', async (tool, args) => {
    const { outcome, violations } = await run(host, { answer: { kind: 'allow', scope: 'once' }, tamper: 'rewrite', calls: [{ id: 'c0', tool, arguments: args }] }, checkWrittenAsPreviewed)
    expect(outcome.observations.tampered).toEqual([{ callId: 'c0', path: 'a.txt', kind: 'rewrite' }])
    expect(outcome.observations.results[0]).toMatchObject({ status: 'error', content: expect.stringMatching(STALE) })
    expect(outcome.changes).toEqual([])
    expect(violations).toEqual([])
  })

  it('a file written back with the very bytes shown is not stale: the approved write runs over what was shown', async () => {
    const { outcome, violations } = await run(host, { answer: { kind: 'allow', scope: 'once' }, tamper: 'same', calls: [{ id: 'c0', tool: 'write', arguments: { path: 'a.txt', content: 'alpha' } }] }, checkWrittenAsPreviewed)
    expect(outcome.observations.results[0]).toMatchObject({ status: 'ok' })
    expect(outcome.changes).toMatchObject([{ path: 'a.txt', prior: 'a\n' }])
    expect(violations).toEqual([])
  })

  // seed 1143, run 1 (I3), on the fs tools before 1ae2996: undoing the creation of sub/b.txt, swapped
  // for a link to important.txt with the same content, deleted important.txt.
  it.each(['link', 'parent-link'] as const)('undoing a creation whose path was swapped for a %s to a file of the same content deletes nothing', async (undo) => {
    const { outcome, violations } = await run(host, { mode: 'acceptEdits', undo, calls: [{ id: 'c0', tool: 'write', arguments: { path: 'sub/b.txt', content: 'alpha' } }] }, checkWrites)
    expect(outcome.undo?.swapped).toBeDefined()
    expect(outcome.undo?.outcomes).toMatchObject([{ status: 'conflict', code: 'REPLACED' }])
    expect(violations).toEqual([])
  })
})

describe('Koishi 4, asked in chat: the edit kinds through `e {json}`', () => {
  // Issue 43 item 2 as a person in the channel types it.
  it('an edit with a misspelled field is refused in the channel with a "did you mean", and the original call does not run', async () => {
    const { outcome, violations } = await run(CHAT, {
      answer: { kind: 'edit', edit: 'unknown-key' },
      calls: [{ id: 'c0', tool: 'deploy', arguments: { env: 'prod', token: 'sk-live-0123456789', ref: 'main' } }],
    }, (outcome) => [...checkWhatRan(outcome), ...checkSecrets(outcome)])
    expect(outcome.observations.approver).toMatchObject([{ answer: 'edit', verdict: 'refused' }])
    // The harness's chat is zh-CN (Koishi's default locale): the refusal reads in it.
    expect(outcome.observations.chat.join('\n')).toContain('是不是想写 `env`？')
    expect(outcome.observations.results[0]).toMatchObject({ status: 'denied' })
    expect(outcome.runs).toEqual([])
    expect(violations).toEqual([])
  })

  it('an accepted edit is shown back as it runs, secret masked, and runs so', async () => {
    const { outcome, violations } = await run(CHAT, {
      answer: { kind: 'edit', edit: 'permission' },
      calls: [{ id: 'c0', tool: 'deploy', arguments: { env: 'prod', token: 'sk-live-0123456789', ref: 'main' } }],
    }, (outcome) => [...checkWhatRan(outcome), ...checkSecrets(outcome)])
    expect(outcome.observations.approver).toMatchObject([{ verdict: 'accepted', echo: { env: 'staging', token: '••••', ref: 'main' } }])
    expect(outcome.runs).toMatchObject([{ args: { env: 'staging', token: 'sk-live-0123456789', ref: 'main' }, target: 'staging' }])
    expect(violations).toEqual([])
  })
})

describe('Cordis 4 with the console: its views read through the HTTP API', () => {
  it.each([
    // The question's view shows the repaired text, the secret masked in it.
    ['a repaired call', "{'env':'staging','token':'sk-live-9d7b3e3e7a','ref':'x',}", `"from":"{'env':'staging','token':'••••','ref':'x',}"`],
    // Never asked: the Log and audit views have the refusal, with no arguments.
    ['a secret the schema refuses', { env: 'staging', token: 'pk-live-aaa000aaaa', ref: 'alpha' }, '"code":"invalid_arguments"'],
  ])('%s with a secret field shows the secret in none of the approval, log and audit views', async (_, args, shown) => {
    const { outcome, violations } = await run(CONSOLE, { answer: { kind: 'allow', scope: 'once' }, calls: [{ id: 'c0', tool: 'deploy', arguments: args }] }, checkSecrets)
    expect(outcome.observations.console.join('\n')).toContain(shown)
    expect(violations).toEqual([])
  })
})

describe.each(['cordis', 'koishi'] as const)('%s: answered through an agent framework (@dogu/frameworks, issue 49)', (name) => {
  const host: HostSpec = { name, approver: 'framework', console: false }

  it('a repaired call with a secret, asked through the framework: decide(), the question and the audit record show no secret, and the answer is audited via the framework', async () => {
    const { outcome, violations } = await run(host, {
      answer: { kind: 'allow', scope: 'once' },
      calls: [{ id: 'c0', tool: 'deploy', arguments: "{'env':'staging','token':'sk-live-9d7b3e3e7a','ref':'x',}" }],
    }, (outcome) => [...checkWhatRan(outcome), ...checkSecrets(outcome), ...checkAudit(outcome)])
    expect(outcome.observations.framework).toEqual([expect.stringContaining('"decision":"ask"')])
    expect(outcome.observations.questions).toEqual(['{"callId":"c0","tool":"deploy","args":{"env":"staging","token":"••••","ref":"x"}}'])
    expect(outcome.runs).toMatchObject([{ args: { env: 'staging', token: 'sk-live-9d7b3e3e7a', ref: 'x' } }])
    expect(outcome.observations.audit).toMatchObject([{ callId: 'c0', ask: { ended: 'answer', via: FRAMEWORK_VIA } }])
    expect(violations).toEqual([])
  })

  // Found by the framework variant (Koishi, seed 4902): both calls were asked about before
  // either was made, and the first's session answer made a grant that allowed the second
  // before its own answer was used. Nothing was asked of the second: I5 holds it to the
  // answers Dogu took, not to the questions the framework put.
  it('two calls answered for the session: the second runs by the grant the first made, and no record says it was asked', async () => {
    const { outcome, violations } = await run(host, {
      rules: [{ permission: 'tool:*', decision: 'ask' }],
      maxRunning: { session: 1 },
      answer: { kind: 'allow', scope: 'session' },
      calls: [{ id: 'c0', tool: 'peek', arguments: { q: 'beta' } }, { id: 'c1', tool: 'peek', arguments: { q: 'alpha' } }],
    }, checkAudit)
    expect(outcome.observations.results.map((result) => result.status)).toEqual(['ok', 'ok'])
    const c1 = outcome.observations.audit.find((record) => record.callId === 'c1')
    expect(c1).toMatchObject({ decided: { kind: 'grant' } })
    expect(c1?.ask).toBeUndefined()
    expect(violations).toEqual([])
  })
})
