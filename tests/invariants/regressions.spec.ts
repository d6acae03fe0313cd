import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { logGuard } from '../../test-support/log-guard'
import { type InstalledOtel, installOtel } from '../../test-support/otel'
import { expectHarnessWarnings } from './expected-logs'
import { checkAudit, checkResults, checkSecrets, checkWhatRan, checkWrites, type Violation } from './invariants'
import { cleanUp, runScenario, type RunOutcome } from './run-scenario'
import type { HostName, SandboxSpec, Scenario } from './scenario'

// Each counterexample the harness found, shrunk, as a named case (docs/invariants.md lists
// them with the seed that found them). They run on both hosts.

let otel: InstalledOtel
beforeAll(() => { otel = installOtel() })
afterAll(() => otel.uninstall())

const base: Scenario = { mode: 'default', rules: [], repair: true, answer: { kind: 'deny' }, middleware: 'none', quotas: [], maxRecords: 10_000, cancelBefore: false, calls: [], flood: 0 }

async function run(host: HostName, scenario: Partial<Scenario>, check: (outcome: RunOutcome) => Violation[], sandbox?: SandboxSpec) {
  expectHarnessWarnings(logGuard)
  const outcome = await runScenario(host, { ...base, ...scenario }, otel, sandbox)
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
