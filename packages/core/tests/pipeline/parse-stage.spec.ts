import { describe, expect, it } from 'vitest'
import { stageWorld } from './stage-fixture'

describe('the parse stage', () => {
  it('ends a call of an unknown tool, naming the closest one', () => {
    const { parse } = stageWorld()
    const result = parse.enter({ id: 'c1', name: 'wether', arguments: '{}' })
    expect(result).toMatchObject({ status: 'error', code: 'unknown_tool' })
    expect('content' in result && result.content).toBe('Unknown tool "wether". Did you mean "weather"? Available tools: weather.')
  })

  it('passes on the arguments it repaired, with how', () => {
    const { parse } = stageWorld()
    const parsed = parse.enter({ id: 'c1', name: 'weather', arguments: "{'city': 'Paris',}" })
    expect(parsed).toMatchObject({ id: 'c1', value: { city: 'Paris' } })
    expect('repaired' in parsed && parsed.repaired?.steps.length).toBeGreaterThan(0)
  })

  it('ends malformed arguments as invalid when repair is off', () => {
    const { parse } = stageWorld(undefined, { repair: false })
    expect(parse.enter({ id: 'c1', name: 'weather', arguments: "{'city': 'Paris'}" })).toMatchObject({ status: 'error', code: 'invalid_arguments' })
  })
})
