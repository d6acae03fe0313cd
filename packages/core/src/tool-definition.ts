import { type Dialect, type JsonSchema, SchemaError, toDialect } from '@dogu/schema'
import type { Tool } from './tool'
import { jsonSchemaOf } from './tool-json-schema'

/** OpenAI Chat Completions / Responses `tools[]` entry. */
export interface OpenAIToolDefinition {
  type: 'function'
  function: { name: string; description: string; parameters: JsonSchema; strict: boolean }
}

/** Anthropic Messages `tools[]` entry. */
export interface AnthropicToolDefinition {
  name: string
  description: string
  input_schema: JsonSchema
}

/** Gemini `functionDeclarations[]` entry. */
export interface GeminiFunctionDeclaration {
  name: string
  description: string
  parameters: JsonSchema
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
  anthropic: (tool, locale) => {
    const { description, parameters } = withFallback(tool, locale, 'anthropic')
    return { name: tool.name, description, input_schema: parameters }
  },
  gemini: (tool, locale) => ({ name: tool.name, ...withFallback(tool, locale, 'gemini') }),
  openai: (tool, locale) => {
    const json = jsonSchemaOf(tool.args, locale)
    try {
      return { type: 'function', function: { name: tool.name, description: tool.description, parameters: toDialect(json, 'openai'), strict: true } }
    } catch (error) {
      if (!SchemaError.is(error, 'DIALECT_REFUSED')) throw error
      // Strict mode cannot express this schema (a dict, say): send it non-strict; our own
      // validation still checks every call.
      return { type: 'function', function: { name: tool.name, description: tool.description, parameters: withoutDraft(json), strict: false } }
    }
  },
}

/**
 * Some schemas have no form in a provider's subset (a tuple or a dict for Gemini). Rather
 * than drop the tool, send an open object and put the full JSON Schema in the description:
 * the model still learns the shape, and our own validation still checks every call.
 */
function withFallback(tool: Tool, locale: string | undefined, dialect: 'anthropic' | 'gemini') {
  const json = jsonSchemaOf(tool.args, locale)
  try {
    return { description: tool.description, parameters: toDialect(json, dialect) }
  } catch (error) {
    if (!SchemaError.is(error, 'DIALECT_REFUSED')) throw error
    return {
      description: `${tool.description}\n\nArguments (JSON Schema): ${JSON.stringify(withoutDraft(json))}`,
      parameters: { type: 'object' },
    }
  }
}

/** Plain JSON Schema for a provider that takes it without the `$schema` marker. */
function withoutDraft({ $schema, ...rest }: JsonSchema): JsonSchema {
  return rest
}

/** The definition of one tool in a provider's format. */
export function toolDefinition<D extends Dialect>(tool: Tool, dialect: D, locale?: string): DefinitionMap[D] {
  const format = formats[dialect]
  if (!format) throw new TypeError(`unknown dialect ${JSON.stringify(dialect)}: use one of ${Object.keys(formats).join(', ')}`)
  return format(tool, locale)
}
