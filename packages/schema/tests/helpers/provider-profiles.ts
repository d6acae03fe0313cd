import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import Ajv2020 from 'ajv/dist/2020'
import { corpusPath } from '../../../../scripts/corpora.mjs'
import { parseYaml } from './yaml-subset'

// The corpus tier's third-party provider profiles (docs/testing.md), read at test time.
const profiles = (...segments: string[]) => corpusPath('json-schema', 'provider-profiles', ...segments)

export type ProfileName = 'openai_202602' | 'gemini_202602' | 'gemini_202503' | 'minimal_202602'

/**
 * A profile checker: the profile's meta-schema, plus the rules its `$comment` says a
 * meta-schema cannot state (the invalid examples in the corpus need them): in the
 * OpenAI-style profiles `required` lists exactly the properties; in every profile
 * `required` and `propertyOrdering` only name defined properties.
 */
export function loadProfile(name: ProfileName): (schema: unknown) => string[] {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  const validate = ajv.compile(parseYaml(readFileSync(profiles('schemas', `${name}.yaml`), 'utf8')) as object)
  const exactRequired = name === 'openai_202602' || name === 'minimal_202602'
  return (schema) => {
    const problems = validate(schema) ? [] : validate.errors!.map(error => `${error.instancePath || '/'} ${error.message}`)
    walk(schema, '', (node, at) => {
      if (!node.properties || typeof node.properties !== 'object') return
      const keys = Object.keys(node.properties)
      for (const key of [...node.required ?? [], ...node.propertyOrdering ?? []]) {
        if (!keys.includes(key)) problems.push(`${at || '/'} names ${key}, which is not a property`)
      }
      if (exactRequired && keys.some(key => !(node.required ?? []).includes(key))) {
        problems.push(`${at || '/'} does not require every property`)
      }
    })
    return problems
  }
}

/** The corpus's own examples: `{ valid: [[file, schema]], invalid: [[file, schema]] }`. */
export function profileExamples(name: ProfileName) {
  const read = (kind: string) => {
    const dir = profiles('tests', name, kind)
    return readdirSync(dir).sort().map(file => [file, JSON.parse(readFileSync(path.join(dir, file), 'utf8'))] as const)
  }
  return { valid: read('valid'), invalid: read('invalid') }
}

function walk(node: any, at: string, visit: (node: any, at: string) => void) {
  if (!node || typeof node !== 'object') return
  if (!Array.isArray(node)) visit(node, at)
  for (const [key, value] of Object.entries(node)) {
    // enum/const/default hold values, not schemas
    if (!Array.isArray(node) && ['enum', 'const', 'default', 'examples'].includes(key)) continue
    walk(value, `${at}/${key}`, visit)
  }
}
