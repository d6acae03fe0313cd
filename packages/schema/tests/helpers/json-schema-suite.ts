import { compileValidator, fromJsonSchema, SchemaError } from '../../src'

/** One case in the JSON Schema Test Suite's format: a schema and instances with their verdicts. */
export interface SuiteCase {
  description: string
  schema: any
  tests: { description: string; data: unknown; valid: boolean }[]
}

export function hasRemoteRef(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.some(hasRemoteRef)
  if (!schema || typeof schema !== 'object') return false
  return Object.entries(schema).some(([key, value]) => (key === '$ref' && typeof value === 'string' && !value.startsWith('#')) || hasRemoteRef(value))
}

function verdict(schema: (data: unknown) => unknown, data: unknown) {
  try {
    schema(structuredClone(data))
    return true
  } catch {
    return false
  }
}

/**
 * Runs cases through the converter: every case it accepts must agree with every test in it,
 * through schemastery and through the compiled validator. `group` names a case in the
 * disagreements (the suite's file name).
 */
export function runSuite(groups: [group: string, cases: SuiteCase[]][], nullAsAbsent: boolean) {
  const counts = { supported: 0, refused: 0, remote: 0, tests: 0 }
  const refusals = new Map<string, number>()
  const disagreements: string[] = []
  for (const [group, cases] of groups) {
    for (const suiteCase of cases) {
      if (hasRemoteRef(suiteCase.schema)) {
        counts.remote++
        continue
      }
      let schema
      try {
        schema = fromJsonSchema(suiteCase.schema, { nullAsAbsent })
      } catch (error) {
        if (!SchemaError.is(error)) throw error
        counts.refused++
        const keyword = error.path.replace(/\[\d+\]/g, '').split('.').pop()!
        refusals.set(keyword, (refusals.get(keyword) ?? 0) + 1)
        continue
      }
      counts.supported++
      const validate = compileValidator(schema)
      for (const test of suiteCase.tests) {
        counts.tests++
        const valid = verdict(schema, test.data)
        if (valid !== test.valid) {
          disagreements.push(`${group} / ${suiteCase.description} / ${test.description}: expected ${test.valid ? 'valid' : 'invalid'}`)
        }
        // the compiled validator must agree with schemastery on these converted schemas too
        if (validate(structuredClone(test.data)).ok !== valid) {
          disagreements.push(`${group} / ${suiteCase.description} / ${test.description}: compiled validator differs`)
        }
      }
    }
  }
  return { counts, refusals: Object.fromEntries(refusals), disagreements }
}
