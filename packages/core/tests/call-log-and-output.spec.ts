import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { DoguError, defineTool, type Session, ToolRegistry } from '../src'

const session: Session = { id: 's1', userId: 'u1', platform: 'test' }

function registryWithEvents(secrets: string[] = []) {
  const events: unknown[][] = []
  const warnings: string[] = []
  const registry = new ToolRegistry({
    redact: { patterns: secrets },
    emit: (name, ...args) => { if (name === 'tools/call-log') events.push(args.slice(1)) },
    logger: { debug() {}, warn: (format: string, ...args: unknown[]) => warnings.push(`${format} ${args.map(String).join(' ')}`) },
  })
  const run = async (name: string, args: Record<string, unknown> = {}) => (await registry.toolset({ session }).execute([{ id: 'c1', name, arguments: args }]))[0]!
  return { registry, events, warnings, run }
}

describe('call.log', () => {
  it('reports each line as tools/call-log with its level and data, redacted like the call\'s text, never in the model\'s text', async () => {
    const { registry, events, run } = registryWithEvents(['hunter2'])
    registry.define(defineTool({
      name: 'sync',
      description: 'Sync',
      traits: { effect: 'read' },
      run: (_args, call) => {
        call.log('info', 'started')
        call.log('warning', { step: 2, detail: 'token hunter2 expires soon' })
        return 'done'
      },
    }))
    const result = await run('sync')
    expect(result.content).toBe('done')
    expect(events).toEqual([['info', 'started'], ['warning', { step: 2, detail: 'token [redacted] expires soon' }]])
  })

  it('logs an unknown level as info and warns the author', async () => {
    const { registry, events, warnings, run } = registryWithEvents()
    registry.define(defineTool({ name: 'loud', description: 'Loud', traits: { effect: 'read' }, run: (_args, call) => { call.log('shout' as never, 'hi'); return 'ok' } }))
    await run('loud')
    expect(events).toEqual([['info', 'hi']])
    expect(warnings.join('\n')).toMatch(/unknown level/)
  })
})

describe('defineTool({ output })', () => {
  const weather = Schema.object({ city: Schema.string().required(), celsius: Schema.number().required() })

  it('passes data that matches the output schema and fails a result whose data does not, as output_invalid', async () => {
    const { registry, run } = registryWithEvents()
    registry.define(defineTool({
      name: 'weather',
      description: 'Weather',
      args: Schema.object({ city: Schema.string().required() }),
      output: weather,
      traits: { effect: 'read' },
      run: ({ city }) => city === 'Oslo' ? { text: 'Oslo: 3 °C', data: { city, celsius: 3 } } : { text: 'somewhere', data: { city, celsius: 'warm' } },
    }))
    const good = await run('weather', { city: 'Oslo' })
    expect(good).toMatchObject({ status: 'ok', content: 'Oslo: 3 °C', data: { city: 'Oslo', celsius: 3 } })
    const bad = await run('weather', { city: 'Lima' })
    expect(bad.status).toBe('error')
    expect(bad.code).toBe('output_invalid')
    expect(bad.content).toMatch(/^Error: the tool's result does not match its output schema \(.*celsius/)
  })

  it('fails a tool with an output schema that returns no data at all', async () => {
    const { registry, run } = registryWithEvents()
    registry.define(defineTool({ name: 'w2', description: 'W', output: weather, traits: { effect: 'read' }, run: () => 'just text' }))
    expect(await run('w2')).toMatchObject({ status: 'error', code: 'output_invalid' })
  })

  it('refuses an output that is not a schema when the tool is defined', () => {
    expect(() => defineTool({ name: 'x', description: 'X', output: { type: 'object' } as never, run: () => '' })).toThrow(DoguError)
  })
})

describe('audio and resources', () => {
  it('keeps audio and resources a tool returns on the result, and redacts text resources', async () => {
    const { registry, run } = registryWithEvents(['s3cr3t'])
    registry.define(defineTool({
      name: 'media',
      description: 'Media',
      traits: { effect: 'read' },
      run: () => ({
        text: 'here',
        audio: [{ mimeType: 'audio/wav', data: 'UklGRg==' }],
        resources: [{ uri: 'test://notes', mimeType: 'text/plain', text: 'key s3cr3t' }, { uri: 'https://example.com/a.pdf', name: 'a.pdf' }],
      }),
    }))
    const result = await run('media')
    expect(result.audio).toEqual([{ mimeType: 'audio/wav', data: 'UklGRg==' }])
    expect(result.resources).toEqual([{ uri: 'test://notes', mimeType: 'text/plain', text: 'key [redacted]' }, { uri: 'https://example.com/a.pdf', name: 'a.pdf' }])
  })
})
