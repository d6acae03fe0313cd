import { describe, expect, it } from 'vitest'
import { convertToDialect, toJsonSchema } from '../src'
import { shapes } from './fixtures/real-world-shapes'
import { loadProfile } from './helpers/provider-profiles'

// Corpus tier (docs/testing.md): the openai (strict) and gemini output of every real-world
// shape passes the third-party provider profiles, read from the corpora folder at test time.
// Non-strict OpenAI output is ordinary JSON Schema, which the strict profile does not describe.

const openai = loadProfile('openai_202602')
const gemini = [['gemini_202602', loadProfile('gemini_202602')], ['gemini_202503', loadProfile('gemini_202503')]] as const

describe('real-world shapes pass the provider profiles', () => {
  it.each(shapes.map(shape => [shape.name, shape] as const))('%s', (_, shape) => {
    const json = toJsonSchema(shape.schema, { locale: shape.locale })
    const strict = convertToDialect(json, 'openai')
    if (strict.strict) expect(['openai_202602', openai(strict.schema)]).toEqual(['openai_202602', []])
    const output = convertToDialect(json, 'gemini').schema
    for (const [name, check] of gemini) expect([name, check(output)]).toEqual([name, []])
  })

  it('most shapes are strict for OpenAI', () => {
    const strict = shapes.filter(shape => convertToDialect(toJsonSchema(shape.schema), 'openai').strict)
    expect(strict.length).toBeGreaterThanOrEqual(shapes.length / 2)
  })
})
