import { minimatch } from 'minimatch'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { AuthorizeRequest } from '../src/permission-gate'
import type { Session } from '../src/session'
import {
  type AskAnswer,
  type Asker,
  type DecisionEvent,
  askedMessage,
  PermissionEngine,
  type PermissionEngineOptions,
  PermissionError,
  type PermissionRequest,
  type PermissionRule,
  type RuleCondition,
} from '../src/permissions'
import { normalizePathTarget, normalizeTarget } from '../src/permissions/compile-rule'

const caller = { id: 's1', userId: 'u1', platform: 'discord', authority: 1 }

function request(over: Partial<AuthorizeRequest> = {}): AuthorizeRequest {
  return { session: caller, permission: { name: 'tool:deploy' }, effect: 'exec', tool: 'deploy', args: { env: 'prod' }, ...over }
}

function engine(options: PermissionEngineOptions = {}) {
  const events: DecisionEvent[] = []
  const warnings: string[] = []
  const permissions = new PermissionEngine({
    onDecision: (event) => events.push(event),
    logger: { debug() {}, warn: (format, ...args) => warnings.push([format, ...args].join(' ')) },
    ...options,
  })
  return { permissions, events, warnings }
}

const decide = (permissions: PermissionEngine, over: Partial<AuthorizeRequest> = {}) => permissions.authorize(request(over)).decision

/** An asker that records requests and lets the test answer them. */
function manualAsker() {
  const requests: PermissionRequest[] = []
  const responders: Array<(answer: AskAnswer) => string> = []
  const signals: AbortSignal[] = []
  const asker: Asker = (req, { signal, respond }) => {
    requests.push(req)
    responders.push(respond)
    signals.push(signal)
  }
  return { asker, requests, signals, answer: (answer: AskAnswer, i = responders.length - 1) => responders[i](answer) }
}

afterEach(() => {
  vi.useRealTimers()
})

describe('PermissionEngine: rules', () => {
  it('lets any matching deny win over ask and allow, and ask win over allow, whatever the order', () => {
    const rules: PermissionRule[] = [
      { permission: 'tool:*', decision: 'allow' },
      { permission: 'tool:deploy', decision: 'ask' },
      { permission: 'tool:deploy', target: 'prod', decision: 'deny', name: 'no prod' },
    ]
    for (const order of [rules, [...rules].reverse()]) {
      const { permissions } = engine({ rules: order })
      const prod = permissions.authorize(request({ permission: { name: 'tool:deploy', target: 'prod' } }))
      expect(prod).toMatchObject({ decision: 'deny', reason: 'rule "no prod" from config.rules[' + order.indexOf(rules[2]) + '] denies it' })
      expect(prod.rule).toMatchObject({ kind: 'rule', rule: rules[2] })
      expect(decide(permissions, { permission: { name: 'tool:deploy', target: 'staging' } })).toBe('ask')
      expect(decide(permissions, { permission: { name: 'tool:echo' } })).toBe('allow')
    }
  })

  it('falls back to the effect default: read allow, write ask, exec ask; an unknown effect counts as exec', () => {
    const { permissions } = engine()
    expect(permissions.authorize(request({ effect: 'read' }))).toMatchObject({ decision: 'allow', rule: { kind: 'default', effect: 'read' } })
    expect(permissions.authorize(request({ effect: 'write' }))).toMatchObject({ decision: 'ask', rule: { kind: 'default', effect: 'write' } })
    expect(permissions.authorize(request({ effect: 'exec' }))).toMatchObject({ decision: 'ask', reason: 'no rule matches; exec tools need approval by default' })
    expect(permissions.authorize(request({ effect: 'launch' as any }))).toMatchObject({ decision: 'ask', rule: { kind: 'default', effect: 'exec' } })
  })

  it('matches permission globs over names with ":" and "."', () => {
    const { permissions } = engine({ rules: [
      { permission: 'fs.*', decision: 'deny' },
      { permission: 'deploy:{run,plan}', decision: 'allow' },
      { permission: 'net.http?', decision: 'allow' },
    ] })
    expect(decide(permissions, { permission: { name: 'fs.write' } })).toBe('deny')
    expect(decide(permissions, { permission: { name: 'fs.read' }, effect: 'read' })).toBe('deny')
    expect(decide(permissions, { permission: { name: 'fsx' } })).toBe('ask')
    expect(decide(permissions, { permission: { name: 'deploy:run' } })).toBe('allow')
    expect(decide(permissions, { permission: { name: 'deploy:plan' } })).toBe('allow')
    expect(decide(permissions, { permission: { name: 'deploy:destroy' } })).toBe('ask')
    expect(decide(permissions, { permission: { name: 'net.https' } })).toBe('allow')
    expect(decide(permissions, { permission: { name: 'net.http' } })).toBe('ask')
  })

  it('matches target path globs: * stops at /, ** crosses it, and a target rule needs a target', () => {
    const { permissions } = engine({ rules: [
      { permission: 'fs.write', target: 'src/**', decision: 'allow' },
      { permission: 'fs.write', target: 'docs/*.md', decision: 'allow' },
      { permission: 'fs.write', target: '**/.env', decision: 'deny' },
      { permission: 'http.get', target: 'https://*.example.com/**', decision: 'allow' },
    ] })
    const write = (target?: string) => decide(permissions, { permission: { name: 'fs.write', target }, effect: 'write' })
    expect(write('src/a/b/c.ts')).toBe('allow')
    expect(write('src')).toBe('allow')
    expect(write('srcx/a.ts')).toBe('ask')
    expect(write('src/../etc/passwd')).toBe('ask')
    expect(write('src/./a.ts')).toBe('allow')
    expect(write('docs/x/../guide.md')).toBe('allow')
    expect(write('../outside.ts')).toBe('ask')
    expect(write('docs/guide.md')).toBe('allow')
    expect(write('docs/deep/guide.md')).toBe('ask')
    expect(write('src/.env')).toBe('deny')
    expect(write(undefined)).toBe('ask')
    expect(decide(permissions, { permission: { name: 'http.get', target: 'https://api.example.com/v1/x' } })).toBe('allow')
    expect(decide(permissions, { permission: { name: 'http.get', target: 'https://example.org/v1/x' } })).toBe('ask')
  })

  it.each([
    ['src/a.ts', 'src/a.ts'],
    ['src/../etc/passwd', 'etc/passwd'],
    ['./a/./b', 'a/b'],
    ['src/.', 'src'],
    ['.', '.'],
    ['a/../..', '..'],
    ['../../x', '../../x'],
    ['/etc/../root', '/root'],
    ['https://h.example/a/../b', 'https://h.example/b'],
    // Paths: `//` folds too, before `..` (item 14 of issue 25).
    ['src//../secrets/x', 'secrets/x'],
    ['src/.//..//secrets//x', 'secrets/x'],
    ['a//b', 'a/b'],
    ['secrets/', 'secrets'],
    ['//etc//passwd', '/etc/passwd'],
    ['/../etc/passwd', '/etc/passwd'],
    ['src//..//..//x', '../x'],
    ['', ''],
    // A path that merely looks like a scheme is a path; it cannot fold into a URL.
    ['https:/h.example//a', 'https:/h.example/a'],
    ['a:b//../c', 'c'],
    // Targets holding a URL keep their slashes: URL normalization is not this function's.
    ['https://h.example//a', 'https://h.example//a'],
    ['GET https://h.example/a/../b', 'GET https://h.example/b'],
    ['file:///etc//passwd', 'file:///etc//passwd'],
  ])('normalizes the target %s to %s before path globs see it', (target, expected) => {
    expect(normalizeTarget(target)).toBe(expected)
  })

  it('folds // before .. in path targets, so a deny rule on secrets/** is not missed', () => {
    const { permissions } = engine({ rules: [
      { permission: 'fs.*', target: 'secrets/**', decision: 'deny' },
      { permission: 'fs.*', target: '/etc/**', decision: 'deny' },
      { permission: 'fs.*', target: 'src/**', decision: 'allow' },
    ] })
    const write = (target: string) => decide(permissions, { permission: { name: 'fs.write', target }, effect: 'write' })
    for (const target of ['src//../secrets/x', 'src/.//../secrets/x', 'src///..//secrets/key', 'secrets//x', 'secrets/', './/secrets/x', 'src//..//src//..//secrets/x']) {
      expect([target, write(target)]).toEqual([target, 'deny'])
    }
    for (const target of ['//etc/passwd', '/../etc/passwd', '/tmp//../etc/shadow']) expect([target, write(target)]).toEqual([target, 'deny'])
    // Siblings with a shared prefix, and a .. that climbs above the start, are not secrets.
    expect(write('secretsX/a')).toBe('ask')
    expect(write('src//a.ts')).toBe('allow')
    expect(write('src//..//..//secrets/x')).toBe('ask')
    expect(normalizePathTarget('a//b/../c')).toBe('a/c')
  })

  it('matches command globs where * crosses / and spaces, unlike a path glob', () => {
    const { permissions } = engine({ rules: [
      { permission: 'shell.exec', command: 'rm *', decision: 'deny' },
      { permission: 'shell.exec', command: 'git status*', decision: 'allow' },
      { permission: 'shell.exec', command: 'echo \\*', decision: 'allow' },
    ] })
    const run = (target: string) => decide(permissions, { permission: { name: 'shell.exec', target } })
    expect(run('rm -rf /tmp/x')).toBe('deny')
    expect(run('git status --short src/a.ts')).toBe('allow')
    expect(run('git push')).toBe('ask')
    expect(run('echo *')).toBe('allow')
    expect(run('echo hi')).toBe('ask')
    // A target glob with whitespace is a command-line glob too; without, it is a path glob.
    const { permissions: targets } = engine({ rules: [
      { permission: 'shell', target: '*rm -rf*', decision: 'deny' },
      { permission: 'http', target: 'POST https://api.example.com/*', decision: 'allow' },
      { permission: 'shell', target: 'ls*', decision: 'allow' },
    ] })
    expect(decide(targets, { permission: { name: 'shell', target: 'cd x && rm -rf /tmp/x' } })).toBe('deny')
    expect(decide(targets, { permission: { name: 'http', target: 'POST https://api.example.com/v1/items' } })).toBe('allow')
    expect(decide(targets, { permission: { name: 'http', target: 'GET https://api.example.com/v1/items' } })).toBe('ask')
    expect(decide(targets, { permission: { name: 'shell', target: 'lsof' } })).toBe('allow')
    expect(decide(targets, { permission: { name: 'shell', target: 'ls /etc' } })).toBe('ask')
  })

  it('matches subjects: users, channels, guilds (plain or platform-qualified), platforms and a minimum authority, all at once', () => {
    const { permissions } = engine({ rules: [
      { permission: 'a', users: ['u1'], decision: 'allow' },
      { permission: 'b', users: ['telegram:u1'], decision: 'allow' },
      { permission: 'c', channels: ['discord:c1'], guilds: ['g1'], decision: 'allow' },
      { permission: 'd', platforms: ['discord'], authority: 2, decision: 'allow' },
      { permission: 'e', authority: 0, decision: 'allow' },
      { permission: 'f', users: [], channels: [], decision: 'allow' },
    ] })
    const as = (name: string, session: object) => decide(permissions, { permission: { name }, session: { id: 's1', ...session } })
    expect(as('a', { userId: 'u1' })).toBe('allow')
    expect(as('a', { userId: 'u2' })).toBe('ask')
    expect(as('a', {})).toBe('ask')
    expect(as('b', { userId: 'u1', platform: 'telegram' })).toBe('allow')
    expect(as('b', { userId: 'u1', platform: 'discord' })).toBe('ask')
    expect(as('c', { channelId: 'c1', guildId: 'g1', platform: 'discord' })).toBe('allow')
    expect(as('c', { channelId: 'c1', guildId: 'g2', platform: 'discord' })).toBe('ask')
    expect(as('c', { channelId: 'c1', guildId: 'g1' })).toBe('ask')
    expect(as('d', { platform: 'discord', authority: 2 })).toBe('allow')
    expect(as('d', { platform: 'discord', authority: 1 })).toBe('ask')
    expect(as('d', { platform: 'discord' })).toBe('ask')
    expect(as('d', { platform: 'qq', authority: 5 })).toBe('ask')
    expect(as('e', {})).toBe('allow')
    expect(as('f', { userId: 'anyone' })).toBe('allow')
  })

  it('agrees with testing every rule by brute force, over 1,000 indexed rules', () => {
    const names = ['tool:deploy', 'tool:echo', 'fs.write', 'fs.read', 'deploy:run', 'shell.exec', 'net.get', 'x']
    const globs = ['tool:*', 'fs.*', '*', 'deploy:*', '{fs,net}.*', 'tool:d*', 'shell.?xec', '*.write', '**']
    const decisions = ['allow', 'ask', 'deny'] as const
    let seed = 7
    const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n
    const rules: PermissionRule[] = []
    for (let i = 0; i < 1000; i++) {
      const permission = random(3) ? `${names[random(names.length)]}${random(4) ? '' : i}` : globs[random(globs.length)]
      const rule: PermissionRule = { permission, decision: decisions[random(3)] }
      if (!random(3)) rule.users = [`u${random(4)}`]
      if (!random(4)) rule.target = ['src/**', 'prod', '*'][random(3)]
      rules.push(rule)
    }
    // Few matches per name, so the defaults and the modes get exercised too.
    const { permissions } = engine({ rules: rules.filter((_, i) => i % 7 === 0) })
    const kept = rules.filter((_, i) => i % 7 === 0)
    const opts = { dot: true, nocomment: true, nonegate: true, preserveMultipleSlashes: true }
    const re = new Map(rules.flatMap((rule) => [rule.permission, rule.target ?? '*']).map((glob) => [glob, minimatch.makeRe(glob, opts) as RegExp]))
    const glob = (value: string, pattern: string) => re.get(pattern)!.test(value)
    for (let i = 0; i < 500; i++) {
      const name = names[random(names.length)]
      const target = random(2) ? ['src/a.ts', 'prod', 'x/y'][random(3)] : undefined
      const userId = `u${random(4)}`
      const matching = kept.filter((rule) => glob(name, rule.permission)
        && (!rule.target || (target !== undefined && glob(target, rule.target)))
        && (!rule.users || rule.users.includes(userId)))
      const expected = matching.some((r) => r.decision === 'deny') ? 'deny' : matching.some((r) => r.decision === 'ask') ? 'ask' : matching.length ? 'allow' : 'ask'
      expect(decide(permissions, { permission: { name, target }, session: { id: 's', userId } })).toBe(expected)
    }
  })

  it('adds a rule at run time and removes it with its disposer; a second dispose is harmless', () => {
    const { permissions } = engine()
    const dispose = permissions.addRule({ permission: 'tool:deploy', decision: 'deny' }, 'plugin "ops"')
    expect(permissions.authorize(request())).toMatchObject({ decision: 'deny', rule: { kind: 'rule', origin: 'plugin "ops"' } })
    expect(permissions.ruleCount).toBe(1)
    dispose()
    dispose()
    expect(permissions.ruleCount).toBe(0)
    expect(decide(permissions)).toBe('ask')
  })

  it.each([
    [{ permission: 'x', decision: 'maybe' }, 'config.rules[0]: "decision" must be "allow", "ask" or "deny", got "maybe"'],
    [{ decision: 'allow' }, 'config.rules[0]: "permission" must be a non-empty glob string'],
    [{ permission: 'x', decision: 'allow', user: ['u1'] }, 'config.rules[0]: unknown field "user"'],
    [{ permission: 'x', decision: 'allow', target: 'a', command: 'b' }, 'set "target" (a path glob) or "command" (a command-line glob), not both'],
    [{ permission: 'x', decision: 'allow', users: 'u1' }, '"users" must be an array of non-empty strings'],
    [{ permission: 'x', decision: 'allow', authority: -1 }, '"authority" must be a number ≥ 0'],
    ['x', 'config.rules[0]: a rule must be an object'],
  ])('rejects a bad rule with a coded error naming the field: %o', (rule, message) => {
    let error: unknown
    try {
      engine({ rules: [rule as any] })
    } catch (caught) {
      error = caught
    }
    expect(PermissionError.is(error, 'INVALID_RULE')).toBe(true)
    expect((error as Error).message).toContain(message)
  })

  it('denies a malformed request instead of guessing', () => {
    const { permissions } = engine({ mode: 'trust' })
    expect(permissions.authorize(request({ permission: {} as any }))).toMatchObject({ decision: 'deny' })
    expect(permissions.authorize(request({ permission: { name: 'x', target: 3 as any } })).decision).toBe('deny')
    expect(permissions.authorize(request({ session: {} as any })).decision).toBe('deny')
  })
})

describe('PermissionEngine: sandboxed rules', () => {
  const shell = (sandboxed?: boolean): Partial<AuthorizeRequest> =>
    ({ tool: 'bash', permission: sandboxed === undefined ? { name: 'shell', target: 'make test' } : { name: 'shell', target: 'make test', sandboxed } })

  it('lets a sandboxed: true allow rule allow only calls that claim a sandbox', () => {
    const { permissions } = engine({ rules: [{ permission: 'shell', sandboxed: true, decision: 'allow', name: 'sandboxed shell' }] })
    expect(permissions.authorize(request(shell(true)))).toMatchObject({
      decision: 'allow', reason: 'rule "sandboxed shell" from config.rules[0] allows it', rule: { kind: 'rule', rule: { sandboxed: true } },
    })
    // Unsandboxed or silent: the rule does not match, the exec default asks.
    expect(permissions.authorize(request(shell(false)))).toMatchObject({ decision: 'ask', rule: { kind: 'default', effect: 'exec' } })
    expect(permissions.authorize(request(shell()))).toMatchObject({ decision: 'ask', rule: { kind: 'default', effect: 'exec' } })
    // Only `true` is a sandbox, not a truthy value a faulty tool returns.
    expect(decide(permissions, { permission: { name: 'shell', sandboxed: 'yes' as any } })).toBe('ask')
  })

  it('lets a sandboxed: false deny rule catch calls that never set the flag, not sandboxed ones', () => {
    const { permissions } = engine({ rules: [{ permission: 'shell', sandboxed: false, decision: 'deny' }] })
    expect(permissions.authorize(request(shell()))).toMatchObject({ decision: 'deny', reason: 'rule (shell, unsandboxed) from config.rules[0] denies it' })
    expect(decide(permissions, shell(false))).toBe('deny')
    expect(decide(permissions, shell(true))).toBe('ask')
  })

  it('keeps deny winning over a sandboxed allow, and narrows with the other fields', () => {
    const { permissions } = engine({ rules: [
      { permission: 'shell', sandboxed: true, decision: 'allow' },
      { permission: 'shell', command: '*rm -rf*', decision: 'deny' },
      { permission: 'shell', sandboxed: true, authority: 4, command: 'deploy*', decision: 'allow' },
    ] })
    expect(decide(permissions, shell(true))).toBe('allow')
    expect(decide(permissions, { permission: { name: 'shell', target: 'rm -rf /', sandboxed: true } })).toBe('deny')
    expect(decide(permissions, { permission: { name: 'shell', target: 'rm -rf /' } })).toBe('deny')
    // The first rule allows any sandboxed call; unsandboxed, the admin-only rule does not apply either.
    expect(decide(permissions, { permission: { name: 'shell', target: 'deploy prod' }, session: { ...caller, authority: 4 } })).toBe('ask')
  })

  it('rejects a sandboxed value that is not a boolean, naming the field', () => {
    let error: unknown
    try {
      engine({ rules: [{ permission: 'shell', sandboxed: 'yes', decision: 'allow' } as unknown as PermissionRule] })
    } catch (caught) {
      error = caught
    }
    expect(PermissionError.is(error, 'INVALID_RULE')).toBe(true)
    expect((error as Error).message).toBe('config.rules[0]: "sandboxed" must be true or false when set, got "yes"')
    expect(() => engine().permissions.addRule({ permission: 'shell', sandboxed: 1 as any, decision: 'deny' }, 'plugin "x"'))
      .toThrow(expect.objectContaining({ code: 'INVALID_RULE', message: expect.stringContaining('"sandboxed"') }))
  })
})

describe('PermissionEngine: host conditions', () => {
  // A host field: the session says which roles the caller holds, or nothing when unknown.
  const calls: unknown[][] = []
  const role: RuleCondition = {
    check: (value) => (typeof value === 'string' && value ? undefined : 'must be a role name'),
    match: (value, session, decision) => {
      calls.push([value, session.id, decision])
      const roles = (session as { roles?: string[] }).roles
      return roles ? roles.includes(value as string) : decision !== 'allow'
    },
  }
  afterEach(() => { calls.length = 0 })

  it('matches a rule by a host field as well as by the built-in ones', () => {
    const { permissions } = engine({
      conditions: { role },
      rules: [{ permission: 'tool:deploy', role: 'ops', decision: 'allow' } as PermissionRule],
    })
    const ops: Session = Object.assign({ ...caller }, { roles: ['ops'] })
    expect(permissions.authorize(request({ session: ops }))).toMatchObject({ decision: 'allow', rule: { kind: 'rule', rule: { role: 'ops' } } })
    expect(decide(permissions, { session: Object.assign({ ...caller }, { roles: ['dev'] }) })).toBe('ask')
    // Unknown facts: this host lets deny and ask rules match, never allow rules.
    expect(decide(permissions)).toBe('ask')
    expect(calls).toEqual([['ops', 's1', 'allow'], ['ops', 's1', 'allow'], ['ops', 's1', 'allow']])
    // Other fields still narrow first: a rule for another permission never consults it.
    calls.length = 0
    expect(decide(permissions, { permission: { name: 'tool:other' } })).toBe('ask')
    expect(calls).toEqual([])
  })

  it('hands the rule\'s decision to the host, for rules added at run time too', () => {
    const { permissions } = engine({ conditions: { role } })
    const dispose = permissions.addRule({ permission: 'tool:*', role: 'guest', decision: 'deny' } as PermissionRule, 'plugin "ops"')
    expect(permissions.authorize(request())).toMatchObject({ decision: 'deny', reason: 'rule (tool:*) from plugin "ops" denies it' })
    expect(decide(permissions, { session: Object.assign({ ...caller }, { roles: ['admin'] }) })).toBe('ask')
    expect(calls.map(([, , decision]) => decision)).toEqual(['deny', 'deny'])
    dispose()
    expect(decide(permissions)).toBe('ask')
  })

  it('checks a host field\'s value at load, naming the rule\'s origin', () => {
    expect(() => engine({ conditions: { role }, rules: [{ permission: 'x', role: 3, decision: 'allow' } as unknown as PermissionRule] }))
      .toThrow(expect.objectContaining({ code: 'INVALID_RULE', message: 'config.rules[0]: "role" must be a role name' }))
    // An unknown field is an error still, and the message lists the host's fields.
    expect(() => engine({ conditions: { role }, rules: [{ permission: 'x', rol: 'ops', decision: 'allow' } as unknown as PermissionRule] }))
      .toThrow(expect.objectContaining({ code: 'INVALID_RULE', message: expect.stringContaining('unknown field "rol" (known: permission, target, command, users, channels, guilds, platforms, authority, sandboxed, approvers, decision, name, role)') }))
  })

  it('refuses a condition that shadows a built-in field or cannot match', () => {
    expect(() => engine({ conditions: { users: role } })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS', message: 'conditions.users: "users" is a built-in rule field' }))
    expect(() => engine({ conditions: { role: {} as RuleCondition } })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }))
  })
})

describe('PermissionEngine: modes', () => {
  const rules: PermissionRule[] = [
    { permission: 'tool:rm', decision: 'deny' },
    { permission: 'tool:cat', decision: 'ask' },
    { permission: 'tool:make', decision: 'allow' },
  ]
  const table = (permissions: PermissionEngine, session = caller) => ({
    readDefault: decide(permissions, { session, permission: { name: 'tool:ls' }, effect: 'read' }),
    readAsk: decide(permissions, { session, permission: { name: 'tool:cat' }, effect: 'read' }),
    write: decide(permissions, { session, permission: { name: 'tool:edit' }, effect: 'write' }),
    execDefault: decide(permissions, { session, permission: { name: 'tool:sh' }, effect: 'exec' }),
    execAllow: decide(permissions, { session, permission: { name: 'tool:make' }, effect: 'exec' }),
    denied: decide(permissions, { session, permission: { name: 'tool:rm' }, effect: 'read' }),
  })

  it.each([
    ['default', { readDefault: 'allow', readAsk: 'ask', write: 'ask', execDefault: 'ask', execAllow: 'allow', denied: 'deny' }],
    ['readOnly', { readDefault: 'allow', readAsk: 'ask', write: 'deny', execDefault: 'deny', execAllow: 'deny', denied: 'deny' }],
    ['acceptEdits', { readDefault: 'allow', readAsk: 'ask', write: 'allow', execDefault: 'ask', execAllow: 'allow', denied: 'deny' }],
    ['trust', { readDefault: 'allow', readAsk: 'allow', write: 'allow', execDefault: 'allow', execAllow: 'allow', denied: 'deny' }],
  ] as const)('%s mode', (mode, expected) => {
    const { permissions } = engine({ rules, mode })
    expect(table(permissions)).toEqual(expected)
    expect(permissions.modeOf('s1')).toBe(mode)
  })

  it('switches per session, names the mode that decided, and returns to the configured mode', () => {
    const { permissions } = engine({ rules })
    permissions.setMode('s1', 'readOnly')
    expect(permissions.authorize(request({ effect: 'write' }))).toMatchObject({
      decision: 'deny',
      reason: 'the session is in readOnly mode, which denies write tools',
      rule: { kind: 'mode', mode: 'readOnly' },
    })
    expect(table(permissions, { ...caller, id: 's2' }).write).toBe('ask')
    permissions.setMode('s1', undefined)
    expect(permissions.modeOf('s1')).toBe('default')
    expect(() => permissions.setMode('s1', 'yolo' as any)).toThrow(expect.objectContaining({ code: 'INVALID_MODE' }))
    expect(() => engine({ mode: 'yolo' as any })).toThrow(expect.objectContaining({ code: 'INVALID_MODE' }))
  })
})

describe('PermissionEngine: asking', () => {
  it('shows askers a request with a summary, a reason, who may answer and an expiry', async () => {
    vi.useFakeTimers({ now: 1_000_000 })
    const { permissions } = engine({ rules: [{ permission: 'deploy:run', decision: 'ask', name: 'deploys' }] })
    const manual = manualAsker()
    permissions.addAsker(manual.asker)
    const pending = permissions.approve({ ...request({ permission: { name: 'deploy:run', target: 'prod' } }), callId: 'c1' }, new AbortController().signal)
    expect(manual.requests).toHaveLength(1)
    const [shown] = manual.requests
    expect(shown).toMatchObject({
      callId: 'c1',
      tool: 'deploy',
      permission: { name: 'deploy:run', target: 'prod' },
      effect: 'exec',
      // What it acts on is shown with it: the permission and its target.
      summary: 'deploy(env=prod) — deploy:run "prod"',
      reason: 'rule "deploys" from config.rules[0] asks for it',
      asked: { kind: 'rule', origin: 'config.rules[0]', rule: expect.objectContaining({ name: 'deploys', decision: 'ask' }) },
      approvers: { userId: 'u1', platform: 'discord', authority: 4 },
      createdAt: 1_000_000,
      expiresAt: 1_000_000 + 300_000,
    })
    expect(shown.id).toMatch(/^perm_[0-9a-f-]{36}$/)
    expect(Object.isFrozen(shown)).toBe(true)
    expect(permissions.pending()).toEqual([shown])
    expect(manual.answer({ decision: 'allow', by: { id: 'u1', platform: 'discord' } })).toBe('accepted')
    expect(await pending).toEqual({ decision: 'allow', reason: 'approved by discord:u1 (once)', rule: { kind: 'answer', by: { id: 'u1', platform: 'discord' }, scope: 'once' } })
    expect(manual.signals[0].aborted).toBe(true)
    expect(permissions.pending()).toEqual([])
    expect(manual.answer({ decision: 'deny', by: 'u1' })).toBe('closed')
  })

  it('tells askers what asked: the effect default, or nothing when the tool asked for itself', () => {
    const { permissions } = engine()
    const manual = manualAsker()
    permissions.addAsker(manual.asker)
    void permissions.approve({ ...request(), callId: 'c1' }, new AbortController().signal)
    void permissions.approve({ ...request(), callId: 'c2', reason: 'deletes 3 files' }, new AbortController().signal)
    expect(manual.requests.map(({ reason, asked }) => ({ reason, asked }))).toEqual([
      { reason: 'no rule matches; exec tools need approval by default', asked: { kind: 'default', effect: 'exec' } },
      { reason: 'deletes 3 files', asked: undefined },
    ])
    void permissions.stop()
  })

  it('gives askers what asked as a message key and parameters, to word in their language', () => {
    const { permissions } = engine({ rules: [
      { permission: 'tool:deploy', decision: 'ask', name: 'deploys' },
      { permission: 'tool:pay', target: 'prod', decision: 'ask' },
      { permission: 'tool:sh', command: 'rm *', decision: 'ask' },
    ] })
    const manual = manualAsker()
    permissions.addAsker(manual.asker)
    const ask = (over: Partial<AuthorizeRequest>, callId: string, reason?: string) => void permissions.approve({ ...request(over), callId, reason }, new AbortController().signal)
    ask({}, 'c1')
    ask({ tool: 'pay', permission: { name: 'tool:pay', target: 'prod' } }, 'c2')
    ask({ tool: 'sh', permission: { name: 'tool:sh', target: 'rm -rf x' } }, 'c3')
    ask({ tool: 'other', permission: { name: 'tool:other' }, effect: 'write' }, 'c4')
    ask({ tool: 'other', permission: { name: 'tool:other' } }, 'c5', 'deletes 3 files')
    expect(manual.requests.map(askedMessage)).toEqual([
      { key: 'rule-named', params: { name: 'deploys', origin: 'config.rules[0]' } },
      { key: 'rule-target', params: { permission: 'tool:pay', target: 'prod', origin: 'config.rules[1]' } },
      { key: 'rule-target', params: { permission: 'tool:sh', target: 'rm *', origin: 'config.rules[2]' } },
      { key: 'default', params: { effect: 'write' } },
      undefined,
    ])
    void permissions.stop()
  })

  it('ignores and logs answers from someone who may not answer, and keeps waiting for one who may', async () => {
    const { permissions, warnings, events } = engine()
    const manual = manualAsker()
    permissions.addAsker(manual.asker)
    // A second asker resolves at once with a spoofed answer: ignored as well.
    permissions.addAsker(async () => ({ decision: 'allow', scope: 'always', by: { id: 'mallory', authority: 3 } }))
    let settled = false
    const pending = permissions.approve({ ...request(), callId: 'c1' }, new AbortController().signal).finally(() => { settled = true })
    await Promise.resolve()
    expect(manual.answer({ decision: 'allow', by: { id: 'u1', platform: 'telegram' } })).toBe('not-allowed')
    expect(manual.answer({ decision: 'allow', by: 'u2' })).toBe('not-allowed')
    expect(manual.answer({ decision: 'allow', by: '' } as any)).toBe('invalid')
    expect(manual.answer({ decision: 'yes', by: 'u1' } as any)).toBe('invalid')
    expect(manual.answer({ decision: 'allow', scope: 'forever', by: 'u1' } as any)).toBe('invalid')
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(settled).toBe(false)
    expect(warnings.filter((w) => w.includes('ignored an answer from'))).toHaveLength(3)
    expect(warnings.some((w) => w.includes('mallory') && w.includes('the caller (discord:u1) or users with authority ≥ 4'))).toBe(true)
    expect(manual.answer({ decision: 'deny', by: { id: 'admin', authority: 4 }, reason: 'not on a Friday' })).toBe('accepted')
    expect(await pending).toEqual({ decision: 'deny', reason: 'admin declined it: not on a Friday', denial: { cause: 'declined', by: 'admin', reason: 'not on a Friday' }, rule: expect.objectContaining({ kind: 'answer' }) })
    expect(permissions.grants()).toEqual([])
    expect(events.at(-1)).toMatchObject({ phase: 'approve', decision: 'deny', source: { kind: 'answer', by: { id: 'admin', authority: 4 }, scope: 'once' } })
  })

  it('lets only authorities answer when the caller may not answer for themselves', async () => {
    const { permissions } = engine({ approvers: { caller: false, authority: 5 } })
    const manual = manualAsker()
    permissions.addAsker(manual.asker)
    const pending = permissions.approve({ ...request(), callId: 'c1' })
    expect(manual.requests[0].approvers).toEqual({ platform: 'discord', authority: 5 })
    expect(manual.answer({ decision: 'allow', by: { id: 'u1', platform: 'discord', authority: 4 } })).toBe('not-allowed')
    expect(manual.answer({ decision: 'allow', by: { id: 'owner', authority: 5 } })).toBe('accepted')
    expect((await pending).decision).toBe('allow')
  })

  it('binds a once answer to the request it answered: the next call is asked again, other arguments too', async () => {
    const { permissions } = engine()
    let answered = 0
    permissions.addAsker(async () => {
      answered++
      return { decision: 'allow', scope: 'once', by: 'u1' }
    })
    expect(await permissions.approve({ ...request({ args: { env: 'prod' } }), callId: 'c1' })).toMatchObject({ decision: 'allow' })
    expect(permissions.grants()).toEqual([])
    expect(decide(permissions, { args: { env: 'staging' } })).toBe('ask')
    expect(decide(permissions, { args: { env: 'prod' } })).toBe('ask')
    await permissions.approve({ ...request({ args: { env: 'staging' } }), callId: 'c2' })
    expect(answered).toBe(2)
  })

  it('turns a session answer into a grant for that session and user only, listed and revocable', async () => {
    const { permissions, events } = engine()
    permissions.addAsker(async () => ({ decision: 'allow', scope: 'session', by: 'u1' }))
    const target = { name: 'deploy:run', target: 'prod' }
    await permissions.approve({ ...request({ permission: target }), callId: 'c1' })
    const [grant] = permissions.grants()
    expect(grant).toMatchObject({ scope: 'session', subject: { sessionId: 's1', userId: 'u1' }, permission: 'deploy:run', target: 'prod', tool: 'deploy', by: 'u1' })
    expect(events.at(-1)).toMatchObject({ phase: 'approve', source: { kind: 'answer', scope: 'session', grant } })
    expect(permissions.authorize(request({ permission: target }))).toMatchObject({ decision: 'allow', rule: { kind: 'grant', grant } })
    expect(decide(permissions, { permission: { name: 'deploy:run', target: 'staging' } })).toBe('ask')
    expect(decide(permissions, { permission: target, session: { ...caller, id: 's2' } })).toBe('ask')
    expect(decide(permissions, { permission: target, session: { ...caller, userId: 'u2' } })).toBe('ask')
    // A deny rule still wins over a grant.
    const dispose = permissions.addRule({ permission: 'deploy:*', decision: 'deny' })
    expect(decide(permissions, { permission: target })).toBe('deny')
    dispose()
    expect(permissions.revoke(grant.id)).toBe(true)
    expect(permissions.revoke(grant.id)).toBe(false)
    expect(decide(permissions, { permission: target })).toBe('ask')
  })

  it('never applies grants to a confirm: always request, and remembers its answers only once', async () => {
    const { permissions } = engine()
    permissions.addAsker(async () => ({ decision: 'allow', scope: 'session', by: 'u1' }))
    await permissions.approve({ ...request(), callId: 'c1' })
    expect(decide(permissions)).toBe('allow')
    expect(decide(permissions, { confirm: 'always' })).toBe('ask')
    const outcome = await permissions.approve({ ...request({ confirm: 'always' }), callId: 'c2' })
    expect(outcome).toEqual({ decision: 'allow', reason: 'approved by u1 (once)', rule: expect.objectContaining({ kind: 'answer' }) })
    expect(permissions.grants()).toHaveLength(1)
  })

  it('answers other waiting requests that a new session grant covers', async () => {
    const { permissions } = engine()
    const manual = manualAsker()
    permissions.addAsker(manual.asker)
    const first = permissions.approve({ ...request(), callId: 'c1' })
    const second = permissions.approve({ ...request(), callId: 'c2' })
    const other = permissions.approve({ ...request({ permission: { name: 'tool:other' } }), callId: 'c3' })
    manual.answer({ decision: 'allow', scope: 'session', by: 'u1' }, 0)
    expect((await first).decision).toBe('allow')
    expect(await second).toMatchObject({ decision: 'allow', reason: expect.stringContaining('remembered "session" approval by u1') })
    expect(permissions.pending().map((p) => p.callId)).toEqual(['c3'])
    manual.answer({ decision: 'deny', by: 'u1' }, 2)
    expect((await other).decision).toBe('deny')
  })

  it('denies when nobody answers before the timeout, and aborts the askers', async () => {
    vi.useFakeTimers()
    const { permissions, events } = engine({ askTimeout: 60_000 })
    const manual = manualAsker()
    permissions.addAsker(manual.asker)
    const pending = permissions.approve({ ...request(), callId: 'c1' })
    vi.advanceTimersByTime(59_999)
    expect(permissions.pending()).toHaveLength(1)
    vi.advanceTimersByTime(1)
    expect(await pending).toEqual({ decision: 'deny', reason: 'timed out waiting for approval (no answer within 1 min)', denial: { cause: 'expired', timeoutMs: 60_000 }, rule: { kind: 'timeout', timeout: 60_000 } })
    expect(manual.signals[0].aborted).toBe(true)
    expect(events.at(-1)).toMatchObject({ phase: 'approve', decision: 'deny', source: { kind: 'timeout', timeout: 60_000 } })
    expect(vi.getTimerCount()).toBe(0)
  })

  it('defaults the ask timeout to 5 minutes', async () => {
    vi.useFakeTimers()
    const { permissions } = engine()
    permissions.addAsker(() => {})
    const pending = permissions.approve({ ...request(), callId: 'c1' })
    vi.advanceTimersByTime(300_000)
    expect(await pending).toMatchObject({ decision: 'deny', reason: 'timed out waiting for approval (no answer within 5 min)' })
  })

  it('cancels the pending request when the call aborts', async () => {
    vi.useFakeTimers()
    const { permissions, events } = engine()
    const manual = manualAsker()
    permissions.addAsker(manual.asker)
    const controller = new AbortController()
    const pending = permissions.approve({ ...request(), callId: 'c1' }, controller.signal)
    controller.abort()
    expect(await pending).toEqual({ decision: 'deny', reason: 'the call was cancelled while waiting for approval', denial: { cause: 'cancelled', when: 'waiting' }, rule: { kind: 'cancelled' } })
    expect(manual.signals[0].aborted).toBe(true)
    expect(permissions.pending()).toEqual([])
    expect(vi.getTimerCount()).toBe(0)
    expect(events.at(-1)?.source).toEqual({ kind: 'cancelled' })
    expect(manual.answer({ decision: 'allow', by: 'u1' })).toBe('closed')
    // Already aborted: no asker is even shown the request.
    expect(await permissions.approve({ ...request(), callId: 'c2' }, controller.signal)).toMatchObject({ decision: 'deny' })
    expect(manual.requests).toHaveLength(1)
  })

  it('denies an ask with a message when no asker is registered, saying how to register one', async () => {
    const { permissions, events } = engine()
    expect(await permissions.approve({ ...request(), callId: 'c1' })).toEqual({
      decision: 'deny',
      reason: 'it needs a person\'s approval (no rule matches; exec tools need approval by default), but no asker is registered to ask anyone: register one with ctx.permissions.asker(...) (see docs/permissions.md)',
      denial: { cause: 'no_asker', asked: { kind: 'default', decision: 'ask', effect: 'exec' } },
      rule: { kind: 'no-asker' },
    })
    expect(events.at(-1)?.source).toEqual({ kind: 'no-asker' })
  })

  it('denies at once when every asker fails, and when the only asker showing it is removed', async () => {
    const { permissions, warnings } = engine()
    const remove = permissions.addAsker(() => { throw new Error('terminal closed') })
    permissions.addAsker(async () => { throw new Error('chat offline') })
    expect(await permissions.approve({ ...request(), callId: 'c1' })).toMatchObject({ decision: 'deny', reason: expect.stringContaining('every asker failed') })
    expect(warnings.filter((w) => w.includes('an asker failed'))).toHaveLength(2)
    remove()
    const { permissions: other } = engine()
    const dispose = other.addAsker(() => {})
    const pending = other.approve({ ...request(), callId: 'c2' })
    dispose()
    dispose()
    expect(await pending).toMatchObject({ decision: 'deny', reason: 'every asker showing the permission request was unloaded before anyone answered' })
  })

  it('an asker that cannot reach anyone (CANNOT_ASK) is one info line, and the model reads that nobody could be asked', async () => {
    const infos: string[] = []
    const { permissions, warnings, events } = engine({
      logger: { debug() {}, info: (format, ...args) => infos.push(format.replace(/%s/g, () => String(args.shift()))), warn: (format, ...args) => warnings.push([format, ...args].join(' ')) },
    })
    const cannot = (message: string) => Object.assign(new Error(message), { name: 'McpError', code: 'CANNOT_ASK' })
    permissions.addAsker(() => { throw cannot('the MCP client cannot show questions: it declared no elicitation') })
    expect(await permissions.approve({ ...request(), callId: 'c1' })).toEqual({
      decision: 'deny',
      reason: 'nobody could be asked to approve deploy (the MCP client cannot show questions: it declared no elicitation)',
      denial: { cause: 'unreachable', tool: 'deploy', why: ['the MCP client cannot show questions: it declared no elicitation'] },
      rule: { kind: 'no-asker' },
    })
    expect(events.at(-1)?.source).toEqual({ kind: 'no-asker' })
    expect(warnings).toEqual([])
    // One line: no stack, no error class, the request and its session named.
    expect(infos).toEqual([expect.stringMatching(/^permission request perm_\S+ \(deploy\(env=prod\)\) of session s1 cannot be shown by one of its askers: the MCP client cannot show questions: it declared no elicitation$/)])

    // Beside an asker that really fails, that failure is a warning with its error, and the model reads it.
    infos.length = 0
    permissions.addAsker(async () => { throw new Error('chat offline') })
    expect(await permissions.approve({ ...request(), callId: 'c2' })).toMatchObject({ decision: 'deny', reason: 'every asker failed to show the permission request (last error: chat offline)', rule: { kind: 'askers-failed' } })
    expect(infos).toHaveLength(1)
    expect(warnings).toEqual([expect.stringMatching(/^an asker failed on permission request %s \(%s\): %s perm_\S+ deploy\(env=prod\) Error: chat offline$/)])

    // And one that can ask still gets the request: a CANNOT_ASK beside it denies nothing.
    const { permissions: other } = engine({ logger: { debug() {}, info() {}, warn: (format, ...args) => warnings.push([format, ...args].join(' ')) } })
    const manual = manualAsker()
    other.addAsker(() => { throw cannot('not my session') })
    other.addAsker(manual.asker)
    const pending = other.approve({ ...request(), callId: 'c3' })
    await Promise.resolve()
    expect(manual.answer({ decision: 'allow', by: 'u1' })).toBe('accepted')
    expect(await pending).toMatchObject({ decision: 'allow' })
  })

  it('decides a pipeline ask again first, but always shows a tool\'s own call.ask', async () => {
    const { permissions } = engine({ rules: [{ permission: 'tool:deploy', decision: 'deny' }] })
    const manual = manualAsker()
    permissions.addAsker(manual.asker)
    expect(await permissions.approve({ ...request(), callId: 'c1' })).toMatchObject({ decision: 'deny', reason: expect.stringContaining('denies it') })
    const asked = permissions.approve({ ...request({ confirm: 'always' }), callId: 'c2', reason: 'delete 3 files' })
    expect(manual.requests.map((r) => r.reason)).toEqual(['delete 3 files'])
    expect(manual.requests[0].confirm).toBe('always')
    manual.answer({ decision: 'allow', by: 'u1' })
    expect((await asked).decision).toBe('allow')
  })

  it('ends every waiting request as a denial on stop, and denies asks after it', async () => {
    vi.useFakeTimers()
    const { permissions } = engine()
    const manual = manualAsker()
    permissions.addAsker(manual.asker)
    const waiting = [permissions.approve({ ...request(), callId: 'c1' }), permissions.approve({ ...request(), callId: 'c2' })]
    await permissions.stop('the permissions service was reloaded')
    expect(await Promise.all(waiting)).toEqual([
      { decision: 'deny', reason: 'the permissions service was reloaded', rule: { kind: 'stopped' } },
      { decision: 'deny', reason: 'the permissions service was reloaded', rule: { kind: 'stopped' } },
    ])
    expect(manual.signals.every((signal) => signal.aborted)).toBe(true)
    expect(vi.getTimerCount()).toBe(0)
    expect(await permissions.approve({ ...request(), callId: 'c3' })).toEqual({ decision: 'deny', reason: 'the permissions service is stopped', denial: { cause: 'stopped', when: 'before_ask' }, rule: { kind: 'stopped' } })
    await permissions.stop()
  })

  it('reports every decision with what decided it', async () => {
    const { permissions, events } = engine({ rules: [{ permission: 'tool:deploy', decision: 'allow' }] })
    permissions.authorize(request())
    permissions.authorize(request({ permission: { name: 'x' }, effect: 'read' }))
    permissions.setMode('s1', 'readOnly')
    permissions.authorize(request({ permission: { name: 'x' } }))
    expect(events.map((e) => [e.phase, e.decision, e.source.kind])).toEqual([
      ['authorize', 'allow', 'rule'],
      ['authorize', 'allow', 'default'],
      ['authorize', 'deny', 'mode'],
    ])
    expect(events[0].request.tool).toBe('deploy')
  })

  it('builds no decision event while wantsDecision says nobody listens, and decides the same', async () => {
    let listening = false
    const { permissions, events } = engine({ rules: [{ permission: 'tool:deploy', decision: 'allow' }], wantsDecision: () => listening })
    expect(decide(permissions)).toBe('allow')
    await expect(permissions.approve({ ...request({ permission: { name: 'x' }, effect: 'read' }), callId: 'c1' })).resolves.toMatchObject({ decision: 'allow' })
    expect(events).toEqual([])
    listening = true
    expect(decide(permissions)).toBe('allow')
    expect(events.map((e) => [e.phase, e.decision])).toEqual([['authorize', 'allow']])
  })
})
