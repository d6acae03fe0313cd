import { describe, expect, it } from 'vitest'
import { compileValidator, convertToDialect, decodeEncoded, type Dialect, toJsonSchema } from '../src'
import { acceptor, dialectShape } from './dialect-shape'
import { conditionalConfigs } from './helpers/conditional-configs'
import { schemasteryAccepts } from './helpers/schemastery-accepts'
import { seeded } from './helpers/seeded-values'

// "Accepts more, never less" (docs/schema-conversion.md) on seeded conditional configs, the
// shape where flattening meets a union branch's constant: every valid value — keys of the base
// and of the branches it was written for, which accept it — sent in a dialect's shape, passes
// that dialect's schema, and decodes to a value schemastery and the compiled validator accept.
// The real-world shapes (dialect-coverage.spec.ts) hold the published ones (ChatLuna,
// plugin-auth); these are generated around them.

const DIALECTS: Dialect[] = ['json', 'openai', 'anthropic', 'gemini']
const CONFIGS = 120
const VALUES = 40

const configs = conditionalConfigs(seeded(0xc0f1), CONFIGS, VALUES)

describe('every dialect accepts what schemastery accepts: seeded conditional configs', () => {
  it.each(configs.map(config => [config.name, config] as const))('%s', (_, config) => {
    const json = toJsonSchema(config.schema)
    const validate = compileValidator(config.schema)
    const accepted = config.values.filter(({ through, value }) => schemasteryAccepts(through, value)).map(({ value }) => value)
    for (const dialect of DIALECTS) {
      const conversion = convertToDialect(json, dialect)
      const accepts = acceptor(conversion.schema)
      const refused = accepted.filter(value => !accepts(dialectShape(value, conversion)).ok)
      expect([dialect, refused, conversion.schema]).toEqual([dialect, [], conversion.schema])
      for (const value of accepted) {
        const decoded = decodeEncoded(dialectShape(value, conversion), conversion.encoded)
        expect([dialect, value, schemasteryAccepts(config.schema, decoded), validate(decoded).ok]).toEqual([dialect, value, true, true])
      }
    }
  })

  it('the values reach the case that matters: accepted values that cross a branch\'s narrowing', () => {
    const values = configs.flatMap(config => config.values.map(written => ({ config, ...written })))
    const accepted = values.filter(({ through, value }) => schemasteryAccepts(through, value))
    const crossing = accepted.filter(({ config, value }) => config.crossesNarrowing(value))
    // both verdicts occur, and many accepted values hold a switch value some branch refuses
    expect(accepted.length).toBeGreaterThan(values.length / 4)
    expect(values.length - accepted.length).toBeGreaterThan(values.length / 20)
    expect(crossing.length).toBeGreaterThan(accepted.length / 10)
  })
})
