import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import Schema from 'schemastery'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MemoryHarness, startMemoryHarness } from './memory-harness'

const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII='
const WAV = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA='

describe('the MCP server\'s tools and results: content kinds, output schemas, order, errors', () => {
  let harness: MemoryHarness
  let client: Client

  beforeAll(async () => {
    harness = await startMemoryHarness((ctx) => {
      // Defined out of name order (and after Dogu's own task_status and task_cancel): clients see them by name.
      ctx.tools.define({
        name: 'weather',
        description: 'The weather in a city',
        args: Schema.object({ city: Schema.string().required() }),
        output: Schema.object({ city: Schema.string().required(), celsius: Schema.number().required() }),
        traits: { effect: 'read' },
        run: ({ city }: { city: string }) => ({ text: `${city}: 21 °C`, data: { city, celsius: 21 } }),
      })
      ctx.tools.define({
        name: 'count',
        description: 'A number, as data',
        output: Schema.number(),
        traits: { effect: 'read' },
        run: () => ({ text: '3', data: 3 }),
      })
      ctx.tools.define({
        name: 'liar',
        description: 'Data that does not match its output schema',
        output: Schema.object({ celsius: Schema.number().required() }),
        traits: { effect: 'read' },
        run: () => ({ text: 'hot', data: { celsius: 'very' } }),
      })
      ctx.tools.define({
        name: 'media',
        description: 'A picture, a sound and three resources',
        traits: { effect: 'read' },
        run: () => ({
          text: 'media',
          images: [{ mimeType: 'image/png', data: PIXEL }],
          audio: [{ mimeType: 'audio/wav', data: WAV }],
          resources: [
            { uri: 'file:///notes/today.md', mimeType: 'text/markdown', text: '# Today' },
            { uri: 'file:///blobs/raw.bin', mimeType: 'application/octet-stream', blob: 'AAEC' },
            { uri: 'https://example.com/reports/q3%20final.pdf?v=2', mimeType: 'application/pdf', title: 'Q3 report', description: 'The final one' },
            { uri: 'https://example.com/data.csv', name: 'Data' },
          ],
        }),
      })
      ctx.tools.define({
        name: 'form',
        description: 'Many fields',
        args: Schema.object({
          a: Schema.string().required(),
          b: Schema.array(Schema.number()).required(),
          c: Schema.string().required(),
          d: Schema.string().required(),
        }),
        traits: { effect: 'read' },
        run: () => 'filled',
      })
    })
    client = await harness.connect()
  })
  afterAll(() => harness.close())

  it('lists tools by name, whatever order they were defined in', async () => {
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name)).toEqual(['count', 'form', 'liar', 'media', 'task_cancel', 'task_status', 'weather'])
  })

  it('lists an output schema as outputSchema, and its data as structuredContent the SDK client checks', async () => {
    const { tools } = await client.listTools()
    expect(tools.find((tool) => tool.name === 'weather')!.outputSchema).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { city: { type: 'string' }, celsius: { type: 'number' } },
      required: ['city', 'celsius'],
    })
    expect(tools.find((tool) => tool.name === 'media')!.outputSchema).toBeUndefined()
    expect(await client.callTool({ name: 'weather', arguments: { city: 'Oslo' } })).toMatchObject({
      content: [{ type: 'text', text: 'Oslo: 21 °C' }],
      structuredContent: { city: 'Oslo', celsius: 21 },
    })
  })

  it('an output that is not an object is listed and sent wrapped as { value }', async () => {
    const { tools } = await client.listTools()
    expect(tools.find((tool) => tool.name === 'count')!.outputSchema).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { value: { type: 'number' } },
      required: ['value'],
    })
    expect((await client.callTool({ name: 'count', arguments: {} })).structuredContent).toEqual({ value: 3 })
  })

  it('data that does not match the output schema is an error result, output_invalid', async () => {
    const result = await client.callTool({ name: 'liar', arguments: {} })
    expect(result).toMatchObject({ isError: true, _meta: { 'dogu.dev/result': { status: 'error', code: 'output_invalid' } } })
    expect((result.content as any)[0].text).toMatch(/^Error: the tool's result does not match its output schema/)
  })

  it('images, audio, embedded resources (text, blob) and resource links, after the text', async () => {
    const result = await client.callTool({ name: 'media', arguments: {} })
    expect(result.content).toEqual([
      { type: 'text', text: 'media' },
      { type: 'image', mimeType: 'image/png', data: PIXEL },
      { type: 'audio', mimeType: 'audio/wav', data: WAV },
      { type: 'resource', resource: { uri: 'file:///notes/today.md', mimeType: 'text/markdown', text: '# Today' } },
      { type: 'resource', resource: { uri: 'file:///blobs/raw.bin', mimeType: 'application/octet-stream', blob: 'AAEC' } },
      // A link needs a name: the URI's last segment, decoded, stands in.
      { type: 'resource_link', uri: 'https://example.com/reports/q3%20final.pdf?v=2', name: 'q3 final.pdf', title: 'Q3 report', description: 'The final one', mimeType: 'application/pdf' },
      { type: 'resource_link', uri: 'https://example.com/data.csv', name: 'Data' },
    ])
  })

  it('an unknown tool is a JSON-RPC error -32602 naming the closest tools, not a result', async () => {
    await expect(client.callTool({ name: 'wether', arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringMatching(/^MCP error -32602: Unknown tool "wether"\. Did you mean "weather"\?/),
    })
  })

  it('malformed arguments are an error result with the first problems, not every one', async () => {
    const result = await client.callTool({ name: 'form', arguments: { b: ['x', 'y', 'z'] } })
    expect(result).toMatchObject({ isError: true, _meta: { 'dogu.dev/result': { code: 'invalid_arguments' } } })
    expect((result.content as any)[0].text).toBe([
      'Invalid arguments:',
      '- $.a: missing required property',
      '- $.b[0]: expected a number, got string "x"',
      '- $.b[1]: expected a number, got string "y"',
      '- … and 3 more problems',
    ].join('\n'))
  })
})
