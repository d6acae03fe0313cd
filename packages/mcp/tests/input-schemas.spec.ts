import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import Schema from 'schemastery'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MemoryHarness, startMemoryHarness } from './memory-harness'

// tools/list as the official SDK client reads it: an optional field is served as its own
// type, not required (MCP Inspector's --strict warned about `type: ['integer', 'null']`),
// while a call may still send null there, which the tool's schema reads as absent.

// Every type array holding null that sits right under `properties`, with its path.
function nullTypedProperties(schema: unknown, at = ''): string[] {
  if (!schema || typeof schema !== 'object') return []
  if (Array.isArray(schema)) return schema.flatMap((item, i) => nullTypedProperties(item, `${at}/${i}`))
  const node = schema as Record<string, unknown>
  const own = Array.isArray(node.type) && node.type.includes('null') && /\/properties\/[^/]+$/.test(at) ? [at] : []
  return [...own, ...Object.entries(node).filter(([key]) => !['enum', 'const', 'default', 'examples'].includes(key))
    .flatMap(([key, child]) => nullTypedProperties(child, `${at}/${key}`))]
}

describe('the input schemas the MCP server lists', () => {
  let harness: MemoryHarness
  let client: Client

  beforeAll(async () => {
    harness = await startMemoryHarness((ctx) => {
      ctx.tools.define({
        name: 'search',
        description: 'Search the notes',
        args: Schema.object({
          q: Schema.string().required(),
          limit: Schema.natural().max(50).default(10),
          mode: Schema.union(['fast', 'slow']),
          tags: Schema.array(Schema.string()),
          filter: Schema.object({ lang: Schema.string(), since: Schema.natural() }),
        }),
        traits: { effect: 'read' },
        run: (args: Record<string, unknown>) => ({ text: JSON.stringify(args), data: args }),
      })
    })
    client = await harness.connect()
  })
  afterAll(() => harness?.close())

  it('serves each optional field as its own type, not required', async () => {
    const { tools } = await client.listTools()
    expect(tools.find((tool) => tool.name === 'search')!.inputSchema).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        q: { type: 'string' },
        limit: { type: 'integer', minimum: 0, maximum: 50, default: 10 },
        mode: { type: 'string', enum: ['fast', 'slow'] },
        tags: { type: 'array', items: { type: ['string', 'null'] } },
        filter: { type: 'object', properties: { lang: { type: 'string' }, since: { type: 'integer', minimum: 0 } } },
      },
      required: ['q'],
    })
    // Dogu's own tools (task_status, task_cancel) too: no listed field is typed [t, "null"]
    expect(tools.flatMap((tool) => nullTypedProperties(tool.inputSchema).map((path) => `${tool.name}${path}`))).toEqual([])
  })

  it('still takes null for an optional field, as absent, and refuses a wrong type', async () => {
    const sent = await client.callTool({ name: 'search', arguments: { q: 'tea', limit: null, mode: null, filter: { lang: null } } })
    expect(sent.isError).toBeUndefined()
    expect(sent.structuredContent).toMatchObject({ q: 'tea', limit: 10 })
    expect((sent.structuredContent as Record<string, unknown>).mode ?? null).toBeNull()
    const wrong = await client.callTool({ name: 'search', arguments: { q: 'tea', limit: 'many' } })
    expect(wrong).toMatchObject({ isError: true, _meta: { 'dogu.dev/result': { status: 'error', code: 'invalid_arguments' } } })
    expect((wrong.content as any)[0].text).toContain('$.limit')
  })
})
