import type { Dialect, JsonSchema } from '@dogu/schema'
import type { Tool } from './tool'
import { dialectOf, jsonSchemaOf } from './tool-json-schema'

/** OpenAI Chat Completions / Responses `tools[]` entry. */
export interface OpenAIToolDefinition {
  type: 'function'
  function: { name: string; description: string; parameters: JsonSchema; strict: boolean }
}

/**
 * Anthropic Messages `tools[]` entry. `input_schema` is always one object at the root (the
 * `anthropic` dialect makes it so), and says so in its type: the definition is assignable to
 * the Anthropic SDK's `Tool` (whose `input_schema` requires `type: 'object'`) without a cast.
 */
export interface AnthropicToolDefinition {
  name: string
  description: string
  input_schema: JsonSchema & { type: 'object' }
}

/** Gemini `functionDeclarations[]` entry; a tool without arguments has no `parameters`. */
export interface GeminiFunctionDeclaration {
  name: string
  description: string
  parameters?: JsonSchema
}

/** Provider-neutral: name, description and JSON Schema 2020-12 parameters. */
export interface JsonToolDefinition {
  name: string
  description: string
  parameters: JsonSchema
}

export interface DefinitionMap {
  openai: OpenAIToolDefinition
  anthropic: AnthropicToolDefinition
  gemini: GeminiFunctionDeclaration
  json: JsonToolDefinition
}

type Format = { [D in Dialect]: (tool: Tool, locale?: string) => DefinitionMap[D] }

const formats: Format = {
  json: (tool, locale) => ({ name: tool.name, description: tool.description, parameters: jsonSchemaOf(tool.args, locale) }),
  anthropic: (tool, locale) => ({ name: tool.name, description: tool.description, input_schema: dialectOf(tool.args, locale, 'anthropic').schema as JsonSchema & { type: 'object' } }),
  gemini: (tool, locale) => {
    const { schema } = dialectOf(tool.args, locale, 'gemini')
    // Gemini refuses an OBJECT without properties: a tool without arguments declares none.
    const empty = !schema.properties || !Object.keys(schema.properties).length
    return empty ? { name: tool.name, description: tool.description } : { name: tool.name, description: tool.description, parameters: schema }
  },
  openai: (tool, locale) => {
    // A schema strict mode cannot state goes out as plain JSON Schema with `strict: false`;
    // Dogu's own validation still checks every call against the exact schema.
    const { schema, strict } = dialectOf(tool.args, locale, 'openai')
    return { type: 'function', function: { name: tool.name, description: tool.description, parameters: schema, strict: strict !== false } }
  },
}

/** The definition of one tool in a provider's format. */
export function toolDefinition<D extends Dialect>(tool: Tool, dialect: D, locale?: string): DefinitionMap[D] {
  const format = formats[dialect]
  if (!format) throw new TypeError(`unknown dialect ${JSON.stringify(dialect)}: use one of ${Object.keys(formats).join(', ')}`)
  return format(tool, locale)
}
