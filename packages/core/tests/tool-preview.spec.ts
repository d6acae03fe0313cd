import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { defineTool, type Logger, type PreviewFunction, type Session, ToolRegistry, type ToolResult } from '../src'
import { PREVIEW_FIELD_LIMIT } from '../src/tool-preview'
import { type AskAnswer, PermissionEngine, type PermissionRequest } from '../src/permissions'

const user: Session = { id: 's1', userId: 'u1', platform: 'discord', authority: 1 }

/**
 * A registry with `deploy` (an exec tool: asked by default) whose preview is the test's, and a
 * logger that keeps its warnings; the asker keeps every request and answers what it is told.
 */
function setup(preview: PreviewFunction<{ env: string }>, rules: ConstructorParameters<typeof PermissionEngine>[0] = {}) {
  const warnings: string[] = []
  const logger: Logger = {
    debug() {},
    warn: (format, ...args) => { warnings.push([format, ...args].join(' | ')) },
  }
  const engine = new PermissionEngine(rules)
  const registry = new ToolRegistry({ logger })
  registry.permissions = engine
  const runs: string[] = []
  registry.define(defineTool({
    name: 'deploy',
    description: 'Deploy the current build',
    args: Schema.object({ env: Schema.union(['staging', 'prod']).required() }),
    traits: { effect: 'exec' },
    preview,
    run: (args) => {
      runs.push(args.env)
      return `deployed ${args.env}`
    },
  }))
  const requests: PermissionRequest[] = []
  let answer: AskAnswer = { decision: 'allow', by: 'u1' }
  engine.addAsker((request, context) => {
    requests.push(request)
    context.respond(answer)
  })
  const call = async (name = 'deploy', args: object = { env: 'prod' }, signal?: AbortSignal): Promise<ToolResult> =>
    (await registry.toolset({ session: user }).execute([{ id: `c-${name}`, name, arguments: args as Record<string, unknown> }], { signal }))[0]
  return { registry, engine, requests, runs, warnings, call, answer: (next: AskAnswer) => { answer = next } }
}

describe('tool previews', () => {
  it('reach the asker on the request, after validation, with the arguments the tool runs with', async () => {
    const seen: unknown[] = []
    const { call, requests, runs } = setup((args, call) => {
      seen.push([args, call.id, call.name])
      return { command: `deploy --env ${args.env}`, text: 'rolls out build 42\nto 3 hosts', url: 'https://deploy.example/prod', diff: '--- a/x\n+++ b/x\n' }
    })
    expect(await call()).toMatchObject({ status: 'ok', content: 'deployed prod' })
    expect(seen).toEqual([[{ env: 'prod' }, 'c-deploy', 'deploy']])
    expect(requests).toHaveLength(1)
    expect(requests[0].preview).toEqual({ text: 'rolls out build 42\nto 3 hosts', diff: '--- a/x\n+++ b/x\n', url: 'https://deploy.example/prod', command: 'deploy --env prod' })
    expect(Object.isFrozen(requests[0].preview)).toBe(true)
    expect(runs).toEqual(['prod'])
    // Invalid arguments never reach the preview.
    expect(await call('deploy', { env: 'nowhere' })).toMatchObject({ status: 'error', code: 'invalid_arguments' })
    expect(seen).toHaveLength(1)
  })

  it('never run for a call that is allowed or denied without asking anyone', async () => {
    let previews = 0
    const { call, requests, runs } = setup(() => {
      previews++
      return { text: 'never shown' }
    }, { rules: [
      { permission: 'tool:deploy', decision: 'allow' },
    ] })
    expect(await call()).toMatchObject({ status: 'ok' })
    expect(await call()).toMatchObject({ status: 'ok' })
    expect(previews).toBe(0)
    expect(requests).toHaveLength(0)
    expect(runs).toEqual(['prod', 'prod'])
    const denied = setup(() => {
      previews++
      return { text: 'never shown' }
    }, { rules: [{ permission: 'tool:deploy', decision: 'deny' }] })
    expect(await denied.call()).toMatchObject({ status: 'denied' })
    expect(previews).toBe(0)
  })

  it('a preview that is missing or empty leaves the request without one', async () => {
    for (const value of [undefined, null, {}, { text: '', diff: undefined }]) {
      const { call, requests } = setup(() => value as any)
      expect(await call()).toMatchObject({ status: 'ok' })
      expect(requests[0]).not.toHaveProperty('preview')
    }
  })

  it('a preview that throws becomes a "(no preview: …)" line and a warning, and the question is still asked', async () => {
    for (const preview of [
      () => { throw new Error('the disk is on fire') },
      async () => { throw new Error('the disk is on fire') },
    ]) {
      const { call, requests, warnings, runs } = setup(preview)
      expect(await call()).toMatchObject({ status: 'ok' })
      expect(requests[0].preview).toEqual({ text: '(no preview: the disk is on fire)' })
      expect(warnings).toEqual(['the preview of tool %s failed: %s | deploy | the disk is on fire'])
      expect(runs).toEqual(['prod'])
    }
  })

  it('what is not a preview object is a line saying so; other field types are shown as text', async () => {
    const cases: Array<[unknown, object]> = [
      ['deploy prod', { text: '(the tool\'s preview returned string, not { text, diff, url, command })' }],
      [42, { text: '(the tool\'s preview returned number, not { text, diff, url, command })' }],
      [['a'], { text: '(the tool\'s preview returned an array, not { text, diff, url, command })' }],
      [{ text: 42, command: true, other: 'ignored' }, { text: '42', command: 'true' }],
    ]
    for (const [value, expected] of cases) {
      const { call, requests, warnings } = setup(() => value as any)
      expect(await call()).toMatchObject({ status: 'ok' })
      expect(requests[0].preview).toEqual(expected)
      expect(warnings).toEqual([])
    }
  })

  it('cuts a field over 64 KiB, saying how much was left out; the other fields are kept whole', async () => {
    const diff = `${'+'.repeat(PREVIEW_FIELD_LIMIT)}${'x'.repeat(1000)}`
    const { call, requests } = setup(() => ({ diff, command: 'deploy' }))
    await call()
    const shown = requests[0].preview!
    expect(PREVIEW_FIELD_LIMIT).toBe(65536)
    expect(shown.diff).toBe(`${'+'.repeat(PREVIEW_FIELD_LIMIT)}\n… 1000 more characters not shown`)
    expect(shown.command).toBe('deploy')
    // Exactly at the limit: whole.
    const exact = setup(() => ({ text: 'y'.repeat(PREVIEW_FIELD_LIMIT) }))
    await exact.call()
    expect(exact.requests[0].preview!.text).toBe('y'.repeat(PREVIEW_FIELD_LIMIT))
  })

  it('a preview that never settles: the question is asked after 5 s, with a line saying why there is none', async () => {
    const started = Date.now()
    const { call, requests, runs } = setup(() => new Promise(() => {}))
    expect(await call()).toMatchObject({ status: 'ok', content: 'deployed prod' })
    expect(Date.now() - started).toBeGreaterThanOrEqual(4_990)
    expect(requests[0].preview).toEqual({ text: '(no preview: the tool\'s preview took over 5 s)' })
    expect(runs).toEqual(['prod'])
  }, 15_000)

  it('a call cancelled during its preview ends cancelled, asks nobody and never runs', async () => {
    const controller = new AbortController()
    let previewing!: () => void
    const started = new Promise<void>((resolve) => { previewing = resolve })
    const { call, requests, runs } = setup(() => {
      previewing()
      return new Promise(() => {})
    })
    const pending = call('deploy', { env: 'prod' }, controller.signal)
    await started
    controller.abort()
    const result = await pending
    expect(result).toMatchObject({ status: 'cancelled', code: 'cancelled' })
    expect(requests).toHaveLength(0)
    expect(runs).toEqual([])
  })

  it('a call cancelled while a preview resolves still asks nobody', async () => {
    const controller = new AbortController()
    const { call, requests } = setup(async () => {
      controller.abort()
      return { text: 'too late' }
    })
    expect(await call('deploy', { env: 'prod' }, controller.signal)).toMatchObject({ status: 'cancelled' })
    expect(requests).toHaveLength(0)
  })

  it('call.ask(reason, { preview }) carries its own preview, bounded, and a plain call.ask none', async () => {
    const { registry, requests } = setup(() => ({ text: 'unused' }), { rules: [{ permission: 'tool:fetch', decision: 'allow' }] })
    registry.define(defineTool({
      name: 'fetch',
      description: 'Fetch, asking at each redirect',
      traits: { effect: 'read' },
      async run(_, call) {
        await call.ask('https://a.example/ redirects (302) to GET https://b.example/', { preview: { url: 'https://b.example/', text: 'x'.repeat(PREVIEW_FIELD_LIMIT + 5) } })
        await call.ask('and once more', { preview: 'not an object' as any })
        await call.ask('and without a preview')
        await call.ask('a preview that cannot be read', { preview: { get text(): string { throw new Error('no getter for you') } } })
        return 'fetched'
      },
    }))
    const result = (await registry.toolset({ session: user }).execute([{ id: 'c-fetch', name: 'fetch', arguments: {} }]))[0]
    expect(result).toMatchObject({ status: 'ok', content: 'fetched' })
    expect(requests.map((r) => r.reason)).toEqual(['https://a.example/ redirects (302) to GET https://b.example/', 'and once more', 'and without a preview', 'a preview that cannot be read'])
    expect(requests[0].preview).toEqual({ url: 'https://b.example/', text: `${'x'.repeat(PREVIEW_FIELD_LIMIT)}\n… 5 more characters not shown` })
    expect(requests[1].preview).toEqual({ text: '(the tool\'s preview returned string, not { text, diff, url, command })' })
    expect(requests[2]).not.toHaveProperty('preview')
    expect(requests[3].preview).toEqual({ text: '(no preview: no getter for you)' })
  })

  it('defineTool refuses a preview that is not a function', () => {
    expect(() => defineTool({ name: 'x', description: 'x', preview: 'diff' as any, run: () => 'ok' })).toThrow('tool "x": preview must be a function')
  })
})
