import { describe, expect, it } from 'vitest'
import { ActiveCall } from '../../src/active-call'
import { stageWorld } from './stage-fixture'

describe('the validate stage', () => {
  it('makes a call of arguments the schema accepts, defaults filled in, and announces it', () => {
    const { parse, validate, events } = stageWorld()
    const parsed = parse.enter({ id: 'c1', name: 'weather', arguments: '{"city":"Paris"}' })
    const call = validate.enter(parsed as Exclude<typeof parsed, { status: unknown }>)
    expect(call).toBeInstanceOf(ActiveCall)
    expect((call as ActiveCall).input).toEqual({ city: 'Paris', days: 1 })
    expect(events.map(([name]) => name)).toEqual(['tools/call-start'])
  })

  it('ends a call the schema refuses, and reports its start and end', () => {
    const { parse, validate, events } = stageWorld()
    const parsed = parse.enter({ id: 'c1', name: 'weather', arguments: '{"city":3}' })
    const result = validate.enter(parsed as Exclude<typeof parsed, { status: unknown }>)
    expect(result).toMatchObject({ status: 'error', code: 'invalid_arguments', name: 'weather' })
    expect(events.map(([name]) => name)).toEqual(['tools/call-start', 'tools/call-end'])
  })
})
