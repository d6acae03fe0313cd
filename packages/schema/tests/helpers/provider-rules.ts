/**
 * What the providers accept, written here from their public references rather than from our
 * dialect tables: OpenAI's Structured Outputs "Supported schemas" (strict mode), and the
 * Gemini API's `Schema` object for function-declaration parameters, an OpenAPI 3.0 subset,
 * narrowed as docs/schema-conversion.md promises (no `anyOf`: null is `nullable`). Each
 * checker returns the problems it finds, each with its JSON pointer; the corpus tier checks
 * the same output against third-party profiles (provider-profiles.corpus.spec.ts).
 */
export type ProviderRules = (schema: unknown) => string[]

const OPENAI_KEYWORDS = new Set([
  'type', 'description', 'title', 'enum', 'const', 'anyOf', '$ref', '$defs',
  'properties', 'required', 'additionalProperties', 'items', 'minItems', 'maxItems',
  'pattern', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
])

const GEMINI_KEYWORDS = new Set([
  'type', 'format', 'title', 'description', 'nullable', 'enum', 'default', 'example',
  'properties', 'required', 'propertyOrdering', 'minProperties', 'maxProperties',
  'items', 'minItems', 'maxItems', 'minLength', 'maxLength', 'pattern', 'minimum', 'maximum',
])
const GEMINI_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object'])

/** Keywords whose values hold schemas, and how: one schema, a list, or a map of them. */
const CHILDREN: Record<string, 'one' | 'list' | 'map'> = {
  items: 'one', additionalProperties: 'one', anyOf: 'list', properties: 'map', $defs: 'map',
}

function walk(schema: unknown, at: string, visit: (node: Record<string, any>, at: string) => void) {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return
  const node = schema as Record<string, any>
  visit(node, at || '/')
  for (const [key, kind] of Object.entries(CHILDREN)) {
    const value = node[key]
    if (value === undefined) continue
    if (kind === 'one') walk(value, `${at}/${key}`, visit)
    else if (kind === 'list' && Array.isArray(value)) value.forEach((child, i) => walk(child, `${at}/${key}/${i}`, visit))
    else if (kind === 'map') for (const [name, child] of Object.entries(value ?? {})) walk(child, `${at}/${key}/${name}`, visit)
  }
}

function isObjectNode(node: Record<string, any>) {
  return node.type === 'object' || (Array.isArray(node.type) && node.type.includes('object'))
}

/** OpenAI strict mode: an object root; every object closed, with every property required; arrays say their items. */
export const openaiRules: ProviderRules = (schema) => {
  const problems: string[] = []
  const root = schema as Record<string, any>
  if (root?.type !== 'object') problems.push('/ the root is not an object')
  if (root?.anyOf !== undefined) problems.push('/ the root is an anyOf')
  walk(schema, '', (node, at) => {
    for (const key of Object.keys(node)) if (!OPENAI_KEYWORDS.has(key)) problems.push(`${at} uses ${key}`)
    if (Array.isArray(node.type) && !(node.type.length === 2 && node.type.includes('null'))) problems.push(`${at} has a type list other than [T, "null"]`)
    if ((node.type === 'array' || (Array.isArray(node.type) && node.type.includes('array'))) && node.items === undefined) {
      problems.push(`${at} is an array without items`)
    }
    if (!isObjectNode(node)) return
    if (node.additionalProperties !== false) problems.push(`${at} is an object without additionalProperties: false`)
    const keys = Object.keys(node.properties ?? {})
    const required: string[] = node.required ?? []
    if (keys.some((key) => !required.includes(key)) || required.some((key) => !keys.includes(key))) {
      problems.push(`${at} does not require exactly its properties`)
    }
  })
  return problems
}

/** Gemini parameters: one type per schema (nullable for null), string enums, known fields. */
export const geminiRules: ProviderRules = (schema) => {
  const problems: string[] = []
  walk(schema, '', (node, at) => {
    for (const key of Object.keys(node)) if (!GEMINI_KEYWORDS.has(key)) problems.push(`${at} uses ${key}`)
    if (!GEMINI_TYPES.has(node.type)) problems.push(`${at} has type ${JSON.stringify(node.type)}`)
    if (node.enum !== undefined && (node.type !== 'string' || !node.enum.every((value: unknown) => typeof value === 'string'))) {
      problems.push(`${at} has an enum that is not a string enum`)
    }
    if (node.type === 'array' && node.items === undefined) problems.push(`${at} is an array without items`)
    const keys = Object.keys(node.properties ?? {})
    for (const key of [...node.required ?? [], ...node.propertyOrdering ?? []]) {
      if (!keys.includes(key)) problems.push(`${at} names ${key}, which is not a property`)
    }
  })
  return problems
}
