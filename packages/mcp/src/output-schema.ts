import type { Tool } from '@dogu/core'
import { toJsonSchema } from '@dogu/schema'
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js'

/** A tool's `output` as MCP lists it, and whether `structuredContent` wraps `data` as `{ value }` to match. */
export interface ListedOutput {
  schema: NonNullable<McpTool['outputSchema']>
  /** The output's root is not an object (MCP wants one): the schema and the data are both `{ value }`. */
  wrapped: boolean
}

const converted = new WeakMap<object, ListedOutput | Error>()

/**
 * The `outputSchema` of a tool that declares `output`: its JSON Schema 2020-12, wrapped as
 * `{ type: 'object', properties: { value }, required: ['value'] }` when its root is not an
 * object, as the result's `structuredContent` is then. Converted once per schema. Throws the
 * conversion's `SchemaError` for an output JSON Schema cannot state (`Schema.function()`);
 * `undefined` for a tool without `output`.
 */
export function outputSchemaOf(tool: Tool): ListedOutput | undefined {
  if (!tool.output) return undefined
  let listed = converted.get(tool.output)
  if (!listed) {
    try {
      listed = convert(tool.output)
    } catch (error) {
      listed = error instanceof Error ? error : new Error(String(error))
    }
    converted.set(tool.output, listed)
  }
  if (listed instanceof Error) throw listed
  return listed
}

function convert(output: NonNullable<Tool['output']>): ListedOutput {
  const { $schema, $defs, ...body } = toJsonSchema(output) as Record<string, unknown>
  if (body.type === 'object') return { schema: { $schema, ...body, ...($defs ? { $defs } : {}) } as unknown as ListedOutput['schema'], wrapped: false }
  // `$defs` stay at the root, where the `$ref`s inside `value` point (`#/$defs/…`).
  return {
    schema: { $schema, type: 'object', properties: { value: body }, required: ['value'], ...($defs ? { $defs } : {}) } as ListedOutput['schema'],
    wrapped: true,
  }
}
