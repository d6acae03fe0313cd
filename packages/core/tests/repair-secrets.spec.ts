import Schema from 'schemastery'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { installOtel, type InstalledOtel } from '../../../test-support/otel'
import { AuditLog, defineTool, type ToolResult, ToolRegistry } from '../src'
import { type PermissionRequest, PermissionEngine } from '../src/permissions'
import { maskRepairedText, UNMASKABLE_FROM } from '../src/repair/mask-repaired-text'

// Secret fields (`role('secret')`) must not leak through a repair's `from`, a validation
// problem, or a JSON parse message: attacks on each channel that sees them (docs/permissions.md).

const SECRET = 'sk-live-4242abcd'
/** Any piece of the secret a leak would show: its tail survives a cut, its head a preview. */
const PIECES = ['4242abcd', 'sk-live', 'live-4242']

function leaks(value: unknown): string[] {
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  return PIECES.filter((piece) => text.includes(piece))
}

function setup(options: { repair?: boolean } = {}) {
  const events: unknown[] = []
  const asked: PermissionRequest[] = []
  const audit = new AuditLog()
  const engine = new PermissionEngine({ onDecision: (event) => audit.onDecision(event) })
  engine.addAsker((request, context) => {
    asked.push(request)
    context.respond({ decision: 'allow', by: 'u1' })
  })
  const registry = new ToolRegistry({
    ...options,
    emit: (name, ...args) => {
      events.push([name, ...args])
      if (name === 'tools/call-end') audit.onCallEnd(args[0], args[1])
    },
  })
  registry.permissions = engine
  const runs: unknown[] = []
  registry.define(defineTool({
    name: 'deploy',
    description: 'Deploy with a key',
    args: Schema.object({
      env: Schema.union(['staging', 'prod'] as const).required(),
      apiKey: Schema.string().pattern(/^sk-/).role('secret').required(),
      note: Schema.string(),
    }),
    traits: { effect: 'write' },
    run: (args) => {
      runs.push(args)
      return `deployed ${args.env}`
    },
  }))
  const call = async (text: string): Promise<ToolResult> =>
    (await registry.toolset({ session: { id: 's1', userId: 'u1' } }).execute([{ id: 'c1', name: 'deploy', arguments: text }]))[0]
  return { call, events, asked, audit, runs }
}

describe('secret fields through a repair: every channel sees them masked', () => {
  let otel: InstalledOtel
  beforeEach(() => {
    otel = installOtel()
  })
  afterEach(async () => {
    await otel.uninstall()
  })

  it('masks a secret written with an escape, twice, and in a comment: asker, result, events, audit, spans', async () => {
    const { call, events, asked, audit, runs } = setup()
    // The attack: `from` kept this text as sent, and every asker, event and the playground showed it.
    const result = await call(`{env: 'prod', apiKey: '\\u0073k-live-4242abcd', note: "ok", /* the key is ${SECRET} */}`)
    expect(result.status).toBe('ok')
    expect(runs).toEqual([{ env: 'prod', apiKey: SECRET, note: 'ok' }])
    expect(asked).toHaveLength(1)
    expect(asked[0].repaired!.from).toBe(`{env: 'prod', apiKey: '••••', note: "ok", /* the key is •••• */}`)
    expect(result.repaired!.from).toBe(asked[0].repaired!.from)
    expect(leaks(asked[0])).toEqual([])
    expect(leaks(events)).toEqual([])
    expect(leaks(await audit.query())).toEqual([])
    expect(leaks(otel.spans().map((span) => ({ attributes: span.attributes, status: span.status, events: span.events })))).toEqual([])
    await audit.stop()
  })

  it('masks a secret inside a JSON string holding the arguments (double-encoded)', async () => {
    const { call, asked } = setup()
    const inner = `{"env": "prod", "apiKey": "\\u0073k-live-4242abcd"}`
    const result = await call(JSON.stringify(inner))
    expect(result.repaired!.steps).toContain('double-encoded')
    expect(leaks(result)).toEqual([])
    expect(leaks(asked)).toEqual([])
    expect(result.repaired!.from).toBe(JSON.stringify('{"env": "prod", "apiKey": "••••"}'))
  })

  it('masks before the record is cut at 2,000 characters, so no head of a secret is left at the cut', async () => {
    const { call } = setup()
    const note = 'x'.repeat(1995 - `{env: 'prod', note: '`.length - `', apiKey: '`.length)
    const text = `{env: 'prod', note: '${note}', apiKey: '${SECRET}',}`
    expect(text.indexOf(SECRET)).toBe(1995)
    const result = await call(text)
    expect(result.status).toBe('ok')
    expect(result.repaired!.from).not.toContain('sk-')
    expect(result.repaired!.from.endsWith('…')).toBe(true)
  })

  it('hides a secret field\'s value in a validation problem, and a secret the model put in another field', async () => {
    const { call, events, runs } = setup()
    // The attack: `must match the pattern /^sk-/ (got "pk-live-4242abcd")`, and the same key in `env`.
    const result = await call(`{"env": "pk-live-4242abcd", "apiKey": "pk-live-4242abcd", "extra": 1,}`)
    expect(result.status).toBe('error')
    expect(result.code).toBe('invalid_arguments')
    expect(result.content).toBe('Invalid arguments:\n- $.env: must be one of "staging", "prod" (got "••••")\n- $.apiKey: must match the pattern /^sk-/ (got ••••)')
    expect(leaks(result)).toEqual([])
    expect(leaks(events)).toEqual([])
    expect(runs).toEqual([])
  })

  it('leaves V8\'s excerpt of text that does not parse out of the message, with or without repair', async () => {
    for (const repair of [false, true]) {
      const { call } = setup({ repair })
      const result = await call(`{"apiKey": "${SECRET}", "env": }`)
      expect(result.code).toBe('invalid_arguments')
      expect(result.content).toMatch(/^Arguments are not valid JSON \(Unexpected token: where, and the text around it, is not shown, as the tool has secret fields\)/)
      expect(leaks(result)).toEqual([])
    }
  })
})

describe('maskRepairedText', () => {
  it.each([
    ['each way a string is written', `{a: "${SECRET}", b: '${SECRET}', c: “${SECRET}”, d: "\\u0073k-live-4242abcd"}`, `{a: "••••", b: '••••', c: “••••”, d: "••••"}`],
    ['inside a longer string', `{a: 'my key: ${SECRET}!'}`, `{a: "my key: ••••!"}`],
    ['in a fence', '```json\n{a: "' + SECRET + '",}\n```', '```json\n{a: "••••",}\n```'],
    ['a number secret as a number', `{pin: 123456, other: '123456'}`, `{pin: ••••, other: '••••'}`],
  ])('masks a secret %s', (_, text, masked) => {
    expect(maskRepairedText(text, [SECRET, '123456'])).toBe(masked)
  })

  it('shows nothing of a text it cannot read into strings', () => {
    expect(maskRepairedText(`{a: "${SECRET}`, [SECRET])).toBe(UNMASKABLE_FROM)
    expect(maskRepairedText(`{a: "${SECRET}"}`, [])).toBe(`{a: "${SECRET}"}`)
  })
})
