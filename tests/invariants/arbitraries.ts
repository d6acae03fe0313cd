import type { PermissionRule } from '@dogu/core'
import fc from 'fast-check'
import { type Answer, type Approver, BAD_SECRET_PREFIX, type CallSpec, type HostName, type HostSpec, type SandboxSpec, type Scenario, SECRET_PREFIX } from './scenario'
import { ABSOLUTE_TARGET } from './workspace-tree'

// fast-check generators of scenarios. Each dimension is one arbitrary; a failure shrinks
// each towards its first (simplest) choice: fewer calls, no rules, default mode.

const secret = (prefix = SECRET_PREFIX) => fc.stringMatching(/^[a-f0-9]{10}$/).map((hex) => `${prefix}${hex}`)
const word = fc.constantFrom('alpha', 'beta', 'hello world', 'x')

/** The rules a user writes, from the docs: allow, ask, deny, approvers and `sandboxed`. */
export const ruleArb: fc.Arbitrary<PermissionRule> = fc.constantFrom<PermissionRule>(
  { permission: 'deploy:run', target: 'staging', decision: 'allow', name: 'staging deploys' },
  { permission: 'deploy:run', target: 'prod', decision: 'deny', name: 'no prod' },
  { permission: 'deploy:run', decision: 'ask', approvers: { authority: 4 }, name: 'admins approve deploys' },
  { permission: 'tool:note', decision: 'allow' },
  { permission: 'tool:note', decision: 'deny' },
  { permission: 'fs.write', target: '**', decision: 'allow', name: 'writes anywhere' },
  { permission: 'fs.write', target: 'sub/**', decision: 'ask' },
  { permission: 'shell', sandboxed: true, decision: 'allow', name: 'sandboxed shell' },
  { permission: 'shell', command: '*rm -rf*', decision: 'deny' },
  { permission: 'tool:*', decision: 'ask' },
)

export const answerArb: fc.Arbitrary<Answer> = fc.oneof(
  fc.record({ kind: fc.constant('allow' as const), scope: fc.constantFrom('once' as const, 'session' as const) }),
  fc.constant({ kind: 'deny' as const }),
  fc.constant({ kind: 'silent' as const }),
  fc.constant({ kind: 'cancel' as const }),
  fc.record({ kind: fc.constant('edit' as const), edit: fc.constantFrom('valid' as const, 'unknown-key' as const, 'invalid' as const, 'permission' as const) }),
)

/** Arguments as an object, or as text: strict JSON, or malformed in a way repair fixes or refuses. */
function asSent(args: Record<string, unknown>): fc.Arbitrary<Record<string, unknown> | string> {
  const json = JSON.stringify(args)
  return fc.constantFrom<Record<string, unknown> | string>(
    args,
    json,
    // Repairable: single quotes and a trailing comma.
    `${json.replaceAll('"', "'").slice(0, -1)},}`,
    // Not repairable without a guess: cut off inside a string.
    json.slice(0, Math.max(2, json.length - 4)),
  )
}

const deployCall = fc.record({
  env: fc.constantFrom('staging', 'prod', 'dev'),
  token: fc.oneof({ weight: 4, arbitrary: secret() }, { weight: 1, arbitrary: secret(BAD_SECRET_PREFIX) }),
  ref: word,
}).chain((args) => asSent(args).map((sent) => ({ tool: 'deploy', arguments: sent })))

const noteCall = fc.record({ text: word, count: fc.constantFrom(1, 2, 3, 7) })
  .chain((args) => asSent(args).map((sent) => ({ tool: 'note', arguments: sent })))

const peekCall = fc.record({ q: word }).map((args) => ({ tool: 'peek', arguments: args as Record<string, unknown> | string }))

/** Paths inside the workspace, protected ones at any depth, and outside it. */
export const PATHS = ['a.txt', 'sub/b.txt', '.git/config', '.git/hooks/pre-commit', '.env', 'sub/.env.local', 'sub/.git/config', '../outside/x.txt', ABSOLUTE_TARGET]
const writeCall = fc.record({ path: fc.constantFrom(...PATHS), content: word })
  .map((args) => ({ tool: 'write', arguments: args as Record<string, unknown> | string }))

/** `edit` over the workspace's files (a.txt holds "a\n"), a protected one, and one that does not match. */
const editCall = fc.record({
  path: fc.constantFrom('a.txt', 'sub/b.txt', '.env', '.git/config'),
  oldText: fc.constantFrom('a', 'alpha', 'API_KEY'),
  newText: word,
}).map((args) => ({ tool: 'edit', arguments: args as Record<string, unknown> | string }))

/** Commands that write inside, into protected paths, outside, or only read. */
export const COMMANDS = [
  'echo hi',
  'echo x > a.txt',
  'echo x >> .git/config',
  'mkdir -p .git/hooks && printf "#!/bin/sh\\n" > .git/hooks/pre-commit',
  'echo y > .env.production',
  'mkdir -p deep/.git && echo z > deep/.git/config',
  'echo out > ../outside/y.txt',
  'rm -rf sub',
]
const bashCall = fc.constantFrom(...COMMANDS).map((command) => ({ tool: 'bash', arguments: { command } as Record<string, unknown> | string }))

/** Calls nobody authorizes: an unknown tool, arguments the schema refuses. */
const refusedCall = fc.constantFrom(
  { tool: 'nope', arguments: {} as Record<string, unknown> | string },
  { tool: 'note', arguments: { count: 2 } as Record<string, unknown> | string },
)

function withIds(calls: fc.Arbitrary<Omit<CallSpec, 'id'>[]>, duplicates: fc.Arbitrary<boolean>): fc.Arbitrary<CallSpec[]> {
  return fc.tuple(calls, duplicates).map(([list, dup]) => list.map((call, i) => ({ id: dup ? `c${i % 2}` : `c${i}`, ...call })))
}

export interface ScenarioOptions {
  /** Include `bash` calls (the sandbox property). */
  bash?: boolean
  maxCalls?: number
}

export function scenarioArb(options: ScenarioOptions = {}): fc.Arbitrary<Scenario> {
  const kinds = [deployCall, noteCall, peekCall, writeCall, editCall, refusedCall, ...(options.bash ? [bashCall, bashCall] : [])]
  const calls = fc.array(fc.oneof(...kinds), { minLength: 1, maxLength: options.maxCalls ?? 4 })
  // A second batch of refused calls after the first, in one run of four: they must not evict
  // what was authorized (I5). (fc.option's `freq` is the odds of its nil: 1 in `freq`.)
  const flood = fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 10, max: 40 }) })
  return fc.record({
    mode: fc.constantFrom('default' as const, 'readOnly' as const, 'acceptEdits' as const, 'trust' as const),
    rules: fc.uniqueArray(ruleArb, { maxLength: 3, selector: (rule) => JSON.stringify(rule) }),
    repair: fc.boolean(),
    answer: answerArb,
    middleware: fc.constantFrom('none' as const, 'rewrite' as const, 'end' as const),
    // fc.option shrinks to its `nil`: a counterexample drops the quota when it does not need it.
    quotas: fc.option(fc.constant({ name: 'two deploys', tools: 'deploy', per: 'session' as const, max: 2, window: 60_000 }), { nil: undefined }).map((quota) => quota ? [quota] : []),
    maxRunning: fc.option(fc.constant({ session: 1 }), { nil: undefined }),
    maxRecords: fc.constantFrom(10_000, 8),
    durable: fc.boolean(),
    // One run in ten: more would leave most batches cancelled before anything runs.
    cancelBefore: fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    calls: withIds(calls, fc.boolean()),
    flood,
    tamper: fc.constantFrom('none' as const, 'rewrite' as const, 'same' as const, 'remove' as const),
    undo: fc.constantFrom('none' as const, 'plain' as const, 'link' as const, 'parent-link' as const),
  }, { requiredKeys: ['mode', 'rules', 'repair', 'answer', 'middleware', 'quotas', 'maxRecords', 'durable', 'cancelBefore', 'calls', 'flood', 'tamper', 'undo'] })
}

export const sandboxArb: fc.Arbitrary<SandboxSpec> = fc.record({
  // Mostly the real sandbox: unsandboxed runs are not checked for I3 (nothing confines them).
  sandbox: fc.oneof({ weight: 3, arbitrary: fc.constant('full' as const) }, fc.constant('unavailable' as const), fc.constant('off' as const)),
  network: fc.constantFrom<SandboxSpec['network']>('none', 'host', ['example.com']),
})

/**
 * Who answers on each host, and whether Cordis's console is read: an asker of the engine or
 * (unless `framework: false`) an agent framework's user on both, the chat on Koishi; Cordis
 * may load the console.
 */
export function hostArb(name: HostName, { framework = true }: { framework?: boolean } = {}): fc.Arbitrary<HostSpec> {
  const others = framework ? ['framework' as const] : []
  if (name === 'koishi') return fc.record({ name: fc.constant(name), approver: fc.constantFrom<Approver>('asker', 'chat', ...others), console: fc.constant(false) })
  return fc.record({ name: fc.constant(name), approver: fc.constantFrom<Approver>('asker', ...others), console: fc.boolean() })
}

/**
 * Issue 43's items 11 and 6 without the rest: writes and edits of the workspace's own files,
 * mostly asked about, the file changed by a third party before the answer, the last change
 * undone after a swap for a link. In `scenarioArb` these meet one run in a few hundred.
 */
export function fileScenarioArb(): fc.Arbitrary<Scenario> {
  const path = fc.constantFrom('a.txt', 'sub/b.txt')
  const fileCall = fc.oneof(
    fc.record({ path, content: word }).map((args) => ({ tool: 'write', arguments: args as Record<string, unknown> | string })),
    // An empty oldText creates the file; "a" is a.txt's one line.
    fc.record({ path, oldText: fc.constantFrom('a', ''), newText: word }).map((args) => ({ tool: 'edit', arguments: args as Record<string, unknown> | string })),
  )
  return fc.record({
    mode: fc.constantFrom('default' as const, 'acceptEdits' as const),
    rules: fc.uniqueArray(fc.constantFrom<PermissionRule>(
      { permission: 'fs.write', target: 'sub/**', decision: 'ask' },
      { permission: 'fs.write', target: 'a.txt', decision: 'allow', name: 'a.txt is free' },
    ), { maxLength: 2, selector: (rule) => JSON.stringify(rule) }),
    repair: fc.constant(true),
    answer: fc.oneof(
      fc.constant({ kind: 'allow' as const, scope: 'once' as const }),
      fc.constant({ kind: 'edit' as const, edit: 'valid' as const }),
      fc.constant({ kind: 'edit' as const, edit: 'permission' as const }),
      fc.constant({ kind: 'allow' as const, scope: 'session' as const }),
      fc.constant({ kind: 'deny' as const }),
    ),
    middleware: fc.constant('none' as const),
    quotas: fc.constant([]),
    maxRecords: fc.constant(10_000),
    cancelBefore: fc.constant(false),
    calls: withIds(fc.array(fileCall, { minLength: 1, maxLength: 3 }), fc.boolean()),
    flood: fc.constant(0),
    // Each shrinks to nothing done: a counterexample keeps only the third party it needs.
    tamper: fc.constantFrom('none' as const, 'rewrite' as const, 'remove' as const, 'same' as const),
    undo: fc.constantFrom('none' as const, 'link' as const, 'parent-link' as const, 'plain' as const),
  })
}
