import { type JsonSchema, withoutAbsentNull } from '@dogu/schema'
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js'

// The toolset hands out one frozen definition per tool and locale, so each is narrowed once.
const listed = new WeakMap<object, McpTool['inputSchema']>()

/**
 * A tool's `inputSchema` as `tools/list` serves it: the toolset's JSON Schema 2020-12 with
 * each optional property as its own type, not required (`{ type: 'integer' }`, not
 * `type: ['integer', 'null']`), see `withoutAbsentNull`. Calls are validated as before: the
 * tool's schema still reads `null` there as an absent value.
 */
export function listedInputSchema(parameters: unknown): McpTool['inputSchema'] {
  if (!parameters || typeof parameters !== 'object') return parameters as McpTool['inputSchema']
  const schema = parameters as JsonSchema
  let result = listed.get(schema)
  if (!result) listed.set(schema, result = withoutAbsentNull(schema) as McpTool['inputSchema'])
  return result
}
