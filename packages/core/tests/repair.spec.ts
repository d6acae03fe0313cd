import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { AuditLog, defineTool, repairArguments, type Session, ToolRegistry, type ToolRegistryOptions, type ToolResult } from '../src'
import { PermissionEngine, type PermissionRequest } from '../src/permissions'

const session: Session = { id: 's1', userId: 'u1', platform: 'qq', authority: 1 }

function setup(options: ToolRegistryOptions = {}) {
  const registry = new ToolRegistry(options)
  const runs: unknown[] = []
  registry.define(defineTool({
    name: 'weather',
    description: '查询城市天气',
    args: Schema.object({ city: Schema.string().required(), days: Schema.natural().default(1) }),
    traits: { effect: 'read' },
    run: (args) => {
      runs.push(args)
      return { text: `${args.city}: sunny`, data: args }
    },
  }))
  registry.define(defineTool({
    name: 'write_note',
    description: 'Write a note',
    args: Schema.object({ title: Schema.string().required(), body: Schema.string().required() }),
    traits: { effect: 'write' },
    run: (args) => {
      runs.push(args)
      return 'saved'
    },
  }))
  const call = (name: string, args: string): Promise<ToolResult> => registry.toolset({ session }).execute([{ id: 'c1', name, arguments: args }]).then(([result]) => result)
  return { registry, runs, call }
}

describe('repair: malformed arguments from the models users run', () => {
  it('repairs what cannot change the meaning, runs the call, and tells the model', async () => {
    const { call, runs } = setup()
    const result = await call('weather', `{'city': '杭州'，"days"：3,}`)
    expect(result).toMatchObject({ status: 'ok', data: { city: '杭州', days: 3 }, repaired: { from: `{'city': '杭州'，"days"：3,}`, steps: ['full-width', 'quotes', 'trailing-comma'] } })
    expect(result.content).toBe('Note: your arguments were not valid JSON; they were repaired (full-width, quotes, trailing-comma) before the call ran. Send strict JSON.\n\n杭州: sunny')
    expect(runs).toEqual([{ city: '杭州', days: 3 }])
  })

  it('keeps full-width punctuation inside strings, and reads a fence, a twice-encoded object, comments, Python literals and unquoted keys', async () => {
    const { call } = setup()
    expect((await call('write_note', '{"title"："周报"，"body"："完成了A，B：C"}')).status).toBe('denied')
    const fenced = await call('weather', '```json\n{city: "Paris", days: 2 // two days\n}\n```')
    expect(fenced).toMatchObject({ status: 'ok', data: { city: 'Paris', days: 2 }, repaired: { steps: ['fence', 'comments', 'unquoted-keys'] } })
    expect(await call('weather', JSON.stringify(JSON.stringify({ city: 'Oslo' })))).toMatchObject({ status: 'ok', data: { city: 'Oslo', days: 1 }, repaired: { steps: ['double-encoded'] } })
    const inner = repairArguments('{"title"："周报"，"body"："完成了A，B：C"}')
    expect(inner).toMatchObject({ value: { title: '周报', body: '完成了A，B：C' }, repaired: { steps: ['full-width'] } })
  })

  it('closes brackets after a complete value, and refuses a cut-off string, number or key with its position', async () => {
    const { call, runs } = setup()
    expect(await call('weather', '{"city": "Rome"')).toMatchObject({ status: 'ok', repaired: { steps: ['closing-brackets'] } })
    runs.length = 0
    for (const [text, why] of [
      ['{"city": "Ro', 'the string at position 9 is cut off'],
      ['{"city": "Rome", "days": 1', 'the number at position 25 ends the text, so it may be cut off'],
      ['{"city": "Rome", "days"', 'the key at position 17 ends the text without its value'],
      ['{"city": "Rome",', 'the text ends at position 15 after ",", so what followed is missing'],
      ['{"city": NaN}', 'repairing it would change what it means at position 9 (the bare word NaN)'],
      ['{"city": "Rome" "days": 2}', 'repairing it would change what it means at position 16 (the string "days")'],
      ['{"city": "Rome"}{"city": "Oslo"}', 'Unexpected character "{" at position 16'],
    ]) {
      const result = await call('weather', text)
      expect(result, text).toMatchObject({ status: 'error', code: 'invalid_arguments' })
      expect(result.content, text).toContain(`They cannot be repaired without guessing: ${why}`)
    }
    expect(runs).toEqual([])
  })

  it('never runs a tool with required arguments on `{}` made from unparsable text', async () => {
    const { call, runs } = setup()
    for (const text of ['{,}', 'sure, here is the call', '{']) {
      const result = await call('weather', text)
      expect(result.status, text).toBe('error')
    }
    expect(runs).toEqual([])
  })

  it('is off with `repair: false`: malformed arguments are refused as before', async () => {
    const { call, runs } = setup({ repair: false })
    const result = await call('weather', `{'city': 'Paris'}`)
    expect(result).toMatchObject({ status: 'error', code: 'invalid_arguments' })
    expect(result.content).toMatch(/^Arguments are not valid JSON \(.+\)\. Send a JSON object\.$/)
    expect(result.repaired).toBeUndefined()
    expect(runs).toEqual([])
  })

  it('leaves valid JSON alone: no `repaired`, no note', async () => {
    const { call } = setup()
    const result = await call('weather', '{"city":"\\u4e1c\\u4eac","days":1}')
    expect(result).toMatchObject({ status: 'ok', content: '东京: sunny' })
    expect(result.repaired).toBeUndefined()
  })

  it('still refuses a forbidden key the repair let through, and names schema problems of repaired arguments', async () => {
    const { call } = setup()
    expect((await call('weather', `{'city': 'x', '__proto__': {'admin': true}}`)).content).toBe('Arguments use a forbidden key at $.__proto__. Rename or remove it.')
    const invalid = await call('weather', `{'city': 3}`)
    expect(invalid).toMatchObject({ status: 'error', code: 'invalid_arguments', repaired: { steps: ['quotes'] } })
    expect(invalid.content).toContain('$.city')
  })

  it('shows a person asked about a repaired write call the repaired arguments, marked as repaired; the audit record says so', async () => {
    const engine = new PermissionEngine({})
    const { registry, runs } = setup()
    registry.permissions = engine
    const asked: PermissionRequest[] = []
    engine.addAsker((request, context) => {
      asked.push(request)
      context.respond({ decision: 'allow', by: 'u1' })
    })
    const audit = new AuditLog({ flushInterval: 10 })
    const [result] = await registry.toolset({ session }).execute([{ id: 'w1', name: 'write_note', arguments: `{title: 'Plan', body: 'Ship it',}` }])
    audit.onCallEnd({ id: 'w1', name: 'write_note', session, args: { title: 'Plan', body: 'Ship it' }, startedAt: Date.now() }, result)
    expect(result).toMatchObject({ status: 'ok', repaired: { steps: ['quotes', 'unquoted-keys', 'trailing-comma'] } })
    expect(asked).toHaveLength(1)
    expect(asked[0]).toMatchObject({ args: { title: 'Plan', body: 'Ship it' }, repaired: { from: `{title: 'Plan', body: 'Ship it',}`, steps: ['quotes', 'unquoted-keys', 'trailing-comma'] } })
    expect(runs).toEqual([{ title: 'Plan', body: 'Ship it' }])
    const [record] = await audit.query({ tool: 'write_note' })
    expect(record.repaired).toEqual({ steps: ['quotes', 'unquoted-keys', 'trailing-comma'] })
    await audit.stop()
  })
})
