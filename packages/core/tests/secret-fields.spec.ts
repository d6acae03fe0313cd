import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { type CallInfo, defineTool, maskSecrets, SECRET_MASK, secretPaths, type Session, ToolRegistry } from '../src'
import { type AskAnswer, type DecisionEvent, PermissionEngine, type PermissionRequest } from '../src/permissions'
import { summarizeArgs } from '../src/permissions/summarize-args'

const session: Session = { id: 's1', userId: 'u1', platform: 'discord', authority: 1 }
const TOKEN = 'sk-live-4f9a8b7c6d5e'
const PASSWORD = 'hunter2-correct-horse'
const KEY = 'ssh-key-0xDEADBEEF'

/** Paths as strings, for reading: `auth.password`, `servers[].key`. */
function listPaths(paths: ReturnType<typeof secretPaths>, prefix = ''): string[] {
  if (!paths) return []
  if (paths.secret) return [prefix || '(root)']
  const out: string[] = []
  for (const [key, inner] of paths.keys ?? []) out.push(...listPaths(inner, prefix ? `${prefix}.${key}` : key))
  if (paths.each) out.push(...listPaths(paths.each, `${prefix}[]`))
  return out
}

const deployArgs = Schema.object({
  env: Schema.string().required(),
  token: Schema.string().role('secret').required(),
  auth: Schema.object({ user: Schema.string(), password: Schema.string().role('secret') }),
  servers: Schema.array(Schema.object({ host: Schema.string(), key: Schema.string().role('secret') })),
  note: Schema.string(),
})

describe('secretPaths', () => {
  it('finds secret fields through objects, arrays, tuples, dicts, unions, intersections and transforms', () => {
    expect(listPaths(secretPaths(deployArgs))).toEqual(['token', 'auth.password', 'servers[].key'])
    const mixed = Schema.intersect([
      Schema.object({ kind: Schema.string() }),
      Schema.union([
        Schema.object({ kind: Schema.const('a'), apiKey: Schema.string().role('secret') }),
        Schema.object({ kind: Schema.const('b'), login: Schema.tuple([Schema.string(), Schema.string().role('secret')]) }),
      ]),
      Schema.object({ headers: Schema.dict(Schema.string().role('secret')) }),
      Schema.object({ wrapped: Schema.transform(Schema.object({ pin: Schema.natural().role('secret') }), (value) => value) }),
    ])
    expect(listPaths(secretPaths(mixed))).toEqual(['apiKey', 'login.1', 'headers[]', 'wrapped.pin'])
  })

  it('is undefined for a schema without secrets, and the same object each time for one with them', () => {
    expect(secretPaths(Schema.object({ a: Schema.string(), b: Schema.array(Schema.object({ c: Schema.number() })) }))).toBeUndefined()
    expect(secretPaths(Schema.object({ url: Schema.string().role('link') }))).toBeUndefined()
    expect(secretPaths(deployArgs)).toBe(secretPaths(deployArgs))
    expect(Object.isFrozen(secretPaths(deployArgs))).toBe(true)
  })
})

describe('maskSecrets', () => {
  const args = {
    env: 'prod',
    token: TOKEN,
    auth: { user: 'root', password: PASSWORD },
    servers: [{ host: 'a.example', key: KEY }, { host: 'b.example' }],
    // The same value as the secret, in a field that is not secret: it stays.
    note: TOKEN,
  }

  it('masks the secret fields only, in a copy, and shares the rest', () => {
    const before = structuredClone(args)
    const masked = maskSecrets(args, secretPaths(deployArgs))
    expect(masked).toEqual({
      env: 'prod',
      token: SECRET_MASK,
      auth: { user: 'root', password: SECRET_MASK },
      servers: [{ host: 'a.example', key: SECRET_MASK }, { host: 'b.example' }],
      note: TOKEN,
    })
    expect(args).toEqual(before)
    expect(masked.servers[1]).toBe(args.servers[1])
    expect(SECRET_MASK).toBe('••••')
  })

  it('returns the value itself without paths or without a secret present', () => {
    expect(maskSecrets(args, undefined)).toBe(args)
    const plain = { env: 'prod', auth: { user: 'root' }, servers: [{ host: 'a' }] }
    expect(maskSecrets(plain, secretPaths(deployArgs))).toBe(plain)
  })

  it('masks a secret of any type, and leaves a key named __proto__ a key', () => {
    const schema = Schema.object({ ['__proto__']: Schema.any().role('secret'), n: Schema.number().role('secret') })
    const value = JSON.parse('{"__proto__": {"polluted": true}, "n": 42}')
    const masked = maskSecrets(value, secretPaths(schema))
    expect(Object.getPrototypeOf(masked)).toBe(Object.prototype)
    expect(JSON.stringify(masked)).toBe('{"__proto__":"••••","n":"••••"}')
  })
})

describe('secret fields in calls', () => {
  function setup() {
    const engine = new PermissionEngine({ onDecision: (event) => decisions.push(event) })
    const decisions: DecisionEvent[] = []
    const starts: CallInfo[] = []
    const ends: CallInfo[] = []
    const registry = new ToolRegistry({
      emit: (name: string, ...args: any[]) => {
        if (name === 'tools/call-start') starts.push(JSON.parse(JSON.stringify(args[0])))
        if (name === 'tools/call-end') ends.push(JSON.parse(JSON.stringify(args[0])))
      },
    })
    registry.permissions = engine
    const received: unknown[] = []
    registry.define(defineTool({
      name: 'deploy',
      description: 'Deploy',
      args: deployArgs,
      permission: (args) => {
        received.push(structuredClone(args))
        return { name: 'deploy:run', target: args.env }
      },
      preview: (args) => {
        received.push(structuredClone(args))
        return { text: `deploying to ${args.env}` }
      },
      traits: { effect: 'exec' },
      run: (args) => {
        received.push(structuredClone(args))
        return `deployed with ${args.token.length}-character token`
      },
    }))
    const requests: PermissionRequest[] = []
    engine.addAsker((request, { respond }) => {
      requests.push(request)
      setTimeout(() => respond({ decision: 'allow', by: 'u1' } satisfies AskAnswer), 0)
    })
    return { registry, requests, received, starts, ends, decisions }
  }

  const args = {
    env: 'prod',
    token: TOKEN,
    auth: { user: 'root', password: PASSWORD },
    servers: [{ host: 'a.example', key: KEY }],
    note: `copy of ${TOKEN}`,
  }

  it('the tool gets the clear value; questions, askers, events and decisions never do', async () => {
    const { registry, requests, received, starts, ends, decisions } = setup()
    const input = structuredClone(args)
    const [result] = await registry.toolset({ session }).execute([{ id: 'c1', name: 'deploy', arguments: JSON.stringify(input) }])
    expect(result).toMatchObject({ status: 'ok', content: `deployed with ${TOKEN.length}-character token` })
    // permission, preview and run each get the real arguments.
    expect(received).toEqual([args, args, args])

    expect(requests).toHaveLength(1)
    const [request] = requests
    expect(request.summary).toContain('token="••••"')
    expect(request.summary).toContain('"password":"••••"')
    expect(request.summary).toContain('"key":"••••"')
    // A non-secret field that holds the same text keeps it.
    expect(request.summary).toContain(`note="copy of ${TOKEN}"`)
    expect(request.args).toEqual({ ...args, token: '••••', auth: { user: 'root', password: '••••' }, servers: [{ host: 'a.example', key: '••••' }] })

    // Everything shown or reported, less the non-secret field that holds the token's text.
    const shown = JSON.stringify({ summary: request.summary, args: request.args, starts, ends, decisions }).replaceAll(`copy of ${TOKEN}`, '')
    for (const secret of [TOKEN, PASSWORD, KEY]) expect(shown).not.toContain(secret)
    expect(starts[0].args).toMatchObject({ token: '••••', note: `copy of ${TOKEN}` })
    // The input handed to execute is left as it was.
    expect(input).toEqual(args)
  })

  it('a tool without secrets shows its arguments as they are, the same object', async () => {
    const infos: CallInfo[] = []
    const registry = new ToolRegistry({ emit: (name: string, info: any) => { if (name === 'tools/call-start') infos.push(info) } })
    let got: unknown
    registry.define(defineTool({ name: 'echo', description: 'Echo', args: Schema.object({ text: Schema.string() }), traits: { effect: 'read' }, run: (args) => { got = args; return 'ok' } }))
    await registry.toolset({ session }).execute([{ id: 'c1', name: 'echo', arguments: { text: 'hi' } }])
    expect(infos[0].args).toBe(got)
  })

  it('summarizeArgs shows what it is given: the pipeline masks before it', () => {
    const masked = maskSecrets(args, secretPaths(deployArgs))
    const summary = summarizeArgs('deploy', masked, { name: 'deploy:run', target: 'prod' })
    expect(summary).toMatch(/^deploy\(env=prod, token="••••", auth=\{"user":"root","password":"••••"\}, /)
    for (const secret of [PASSWORD, KEY]) expect(summary).not.toContain(secret)
  })
})
