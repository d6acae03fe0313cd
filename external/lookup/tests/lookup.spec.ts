import { describe, expect, it } from 'vitest'
import { pluginApp, session } from './plugin-app'
import * as Lookup from '../src'

const setup = (config?: Partial<Lookup.Config>, options?: { dogu?: boolean }) => pluginApp(Lookup, 'lookup', config, options)

describe('findCapitals', () => {
  it('ranks an exact match before prefixes and substrings, and folds case and accents', () => {
    expect(Lookup.findCapitals(Lookup.capitals, 'paris', 5).map((row) => row.code)).toEqual(['FR'])
    expect(Lookup.findCapitals(Lookup.capitals, 'brasilia', 5).map((row) => row.code)).toEqual(['BR'])
    // "mexico" is Mexico's exact name and the prefix of its capital.
    expect(Lookup.findCapitals(Lookup.capitals, 'Mexico', 5).map((row) => row.code)).toEqual(['MX'])
    expect(Lookup.findCapitals(Lookup.capitals, 'land', 5).map((row) => row.code)).toEqual(['TH', 'NZ'])
    expect(Lookup.findCapitals(Lookup.capitals, 'n', 3).map((row) => row.code)).toEqual(['IN', 'NZ', 'KE'])
    // Two letters: a code or a prefix, never a substring ("de" is not in "New Delhi").
    expect(Lookup.findCapitals(Lookup.capitals, 'de', 5).map((row) => row.code)).toEqual(['DE'])
    expect(Lookup.findCapitals(Lookup.capitals, '  ', 5)).toEqual([])
  })
})

describe('lookup plugin', () => {
  it('defines one read-only, parallel tool', async () => {
    const { ctx } = await setup()
    const tool = ctx.tools.get('lookup')!
    expect(tool.traits).toMatchObject({ effect: 'read', parallel: true, timeout: 5_000 })
    expect(ctx.tools.registry.ownerOf('lookup')).toBe('plugin "lookup"')
    const [definition] = ctx.tools.toolset({ session }).definitions('json')
    expect(definition).toMatchObject({ name: 'lookup', parameters: { type: 'object', required: ['q'] } })
  })

  it('answers in English and Chinese, by country, capital or code', async () => {
    const { call } = await setup()
    expect(await call('{"q":"France"}')).toMatchObject({ status: 'ok', content: 'France (法国, FR): capital Paris (巴黎)' })
    expect((await call({ q: '东京' })).content).toBe('Japan (日本, JP): capital Tokyo (东京)')
    expect((await call({ q: 'us' })).content).toBe('United States (美国, US): capital Washington, D.C. (华盛顿)')
    expect((await call({ q: 'new' })).content).toBe('India (印度, IN): capital New Delhi (新德里)\nNew Zealand (新西兰, NZ): capital Wellington (惠灵顿)')
    const result = await call({ q: '中国' })
    expect(result.data).toEqual([Lookup.capitals[0]])
  })

  it('says so when nothing matches, without failing the call', async () => {
    const { call } = await setup()
    expect(await call({ q: 'Atlantis' })).toMatchObject({
      status: 'ok',
      content: 'No country or capital matches "Atlantis". Try an English or Chinese name, or a two-letter code such as "FR".',
      data: [],
    })
  })

  it('runs without a permissions service, since it only reads', async () => {
    const { ctx, call } = await setup()
    expect(ctx.get('permissions')).toBeUndefined()
    expect(ctx.tools.registry.permissions).toBeUndefined()
    expect((await call({ q: 'JP' })).status).toBe('ok')
  })

  it('runs under the default plugin\'s permissions service without asking anyone, since it only reads', async () => {
    const { ctx, call } = await setup(undefined, { dogu: true })
    expect(ctx.tools.registry.permissions).toBe(ctx.permissions.engine)
    let asked = 0
    ctx.permissions.asker(() => { asked++ })
    expect(await call({ q: 'JP' })).toMatchObject({ status: 'ok', content: 'Japan (日本, JP): capital Tokyo (东京)' })
    expect(asked).toBe(0)
  })

  it('caps rows at the configured limit, and refuses a larger one', async () => {
    const { call } = await setup({ limit: 2 })
    expect((await call({ q: 'a' })).content.split('\n')).toHaveLength(2)
    expect(await call({ q: 'a', limit: 3 })).toMatchObject({
      status: 'error',
      code: 'invalid_arguments',
      content: 'Invalid arguments:\n- $.limit: expected a number <= 2, got 3',
    })
  })

  it('reports a missing query as invalid arguments', async () => {
    const { call } = await setup()
    expect(await call({})).toMatchObject({
      status: 'error',
      code: 'invalid_arguments',
      content: 'Invalid arguments:\n- $.q: missing required property',
    })
    expect((await call({ q: '' })).content).toBe('Invalid arguments:\n- $.q: expected at least 1 characters, got 0')
  })

  it('runs calls of one batch side by side', async () => {
    const { ctx } = await setup()
    const results = await ctx.tools.toolset({ session }).execute([
      { id: 'a', name: 'lookup', arguments: '{"q":"DE"}' },
      { id: 'b', name: 'lookup', arguments: '{"q":"罗马"}' },
    ])
    expect(results.map((result) => `${result.id} ${result.content}`)).toEqual([
      'a Germany (德国, DE): capital Berlin (柏林)',
      'b Italy (意大利, IT): capital Rome (罗马)',
    ])
  })

  it('withdraws the tool when the plugin is disposed', async () => {
    const { ctx, fiber } = await setup()
    await fiber.dispose()
    expect(ctx.tools.get('lookup')).toBeUndefined()
    expect(ctx.tools.list()).toEqual([])
  })
})
