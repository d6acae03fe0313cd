import type { JsonSchema } from '@dogu/schema'
import { isTool } from '../define-tool'
import type { Tool } from '../tool'
import { passingJsonSchemaOf } from '../tool-json-schema'

/**
 * What the search index reads of a tool: its name, its description and its parameters as
 * JSON Schema. Records from elsewhere (an MCP server's `tools/list`, a benchmark corpus)
 * can be indexed the same way.
 */
export interface SearchDocument {
  name: string
  description: string
  /** The parameters' JSON Schema; property names, descriptions and enum values are indexed. */
  parameters?: JsonSchema
}

/** The text of a document, split into the fields the index weighs separately. */
export interface SearchFields {
  name: string
  description: string
  /** Property names, nested ones included. */
  parameterNames: string
  /** Property titles, descriptions and string enum values. */
  parameterText: string
}

/** Deeper or longer than this, a schema is more noise than signal. */
const MAX_DEPTH = 4
const MAX_PROPERTIES = 200

/** Reads a tool (through its JSON Schema, converted without being kept) or a plain record into index fields. */
export function searchFields(source: Tool | SearchDocument): SearchFields {
  const parameters = isTool(source) ? passingJsonSchemaOf(source.args) : source.parameters
  const names: string[] = []
  const text: string[] = []
  if (parameters && typeof parameters === 'object') {
    collect(parameters, 0, names, text)
    // A named definition (`definition(…)`, an imported `$defs`) holds fields like any other.
    const defs = parameters.$defs
    if (defs && typeof defs === 'object') for (const inner of Object.values(defs)) if (inner && typeof inner === 'object') collect(inner as JsonSchema, 1, names, text)
  }
  return {
    name: source.name,
    description: typeof source.description === 'string' ? source.description : '',
    parameterNames: names.join(' '),
    parameterText: text.join(' \n'),
  }
}

function collect(schema: JsonSchema, depth: number, names: string[], text: string[]) {
  if (depth > MAX_DEPTH || names.length > MAX_PROPERTIES) return
  const properties = schema.properties
  if (properties && typeof properties === 'object') {
    for (const [key, value] of Object.entries(properties as Record<string, unknown>)) {
      names.push(key)
      if (!value || typeof value !== 'object') continue
      const property = value as JsonSchema
      pushString(text, property.title)
      pushString(text, property.description)
      if (Array.isArray(property.enum)) for (const item of property.enum) pushString(text, item)
      collect(property, depth + 1, names, text)
    }
  }
  for (const key of ['items', 'additionalProperties'] as const) {
    const inner = schema[key]
    if (inner && typeof inner === 'object' && !Array.isArray(inner)) collect(inner as JsonSchema, depth + 1, names, text)
  }
  for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const) {
    const list = schema[key]
    if (!Array.isArray(list)) continue
    for (const inner of list) if (inner && typeof inner === 'object') collect(inner as JsonSchema, depth + 1, names, text)
  }
}

function pushString(list: string[], value: unknown) {
  if (typeof value === 'string' && value) list.push(value)
}
