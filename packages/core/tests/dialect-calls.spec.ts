import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { defineTool, ToolRegistry } from '../src'

// What a model sees in a provider's dialect may say less than the tool's schema (a dict
// JSON-encoded for Gemini, a tagged union flattened into one object). These tests send what
// the loosened form allows and check that the pipeline decodes it, still applies the exact
// schema, and names the real rule when a call breaks it.

const session = { id: 's1' }

const tagArgs = Schema.object({
  labels: Schema.dict(Schema.string()).description('Labels by name'),
  extra: Schema.any(),
  note: Schema.string(),
})

// Koishi's conditional config: shared fields, then one branch per `mode`.
const sourceArgs = Schema.intersect([
  Schema.object({ name: Schema.string().required() }),
  Schema.union([
    Schema.object({ mode: Schema.const('file').required(), path: Schema.string().required() }),
    Schema.object({ mode: Schema.const('url').required(), url: Schema.string().required() }),
  ]),
])

function tools() {
  const registry = new ToolRegistry()
  const received: unknown[] = []
  registry.define(defineTool({ name: 'tag', description: 'Tag things', args: tagArgs, traits: { effect: 'read' }, run: (args) => { received.push(args); return 'tagged' } }))
  registry.define(defineTool({ name: 'source', description: 'Add a source', args: sourceArgs, traits: { effect: 'read' }, run: (args) => { received.push(args); return 'added' } }))
  registry.define(defineTool({ name: 'ping', description: 'Answer pong', traits: { effect: 'read' }, run: () => 'pong' }))
  return { registry, received }
}

describe('calls in a loosened dialect', () => {
  it('Gemini: decodes the JSON-encoded fields it was shown before validating them', async () => {
    const { registry, received } = tools()
    const toolset = registry.toolset({ session })
    const [, , tag] = toolset.definitions('gemini')
    expect(tag.parameters!.properties).toMatchObject({ labels: { type: 'string' }, extra: { type: 'string' }, note: { type: 'string' } })
    const [result] = await toolset.execute([{ id: 'c1', name: 'tag', arguments: { labels: '{"env":"prod"}', extra: '[1,{"a":null}]', note: 'plain' } }])
    expect(result).toMatchObject({ status: 'ok', content: 'tagged' })
    expect(received).toEqual([{ labels: { env: 'prod' }, extra: [1, { a: null }], note: 'plain' }])
  })

  it('Gemini: text that is not JSON is an error naming the field and the encoding', async () => {
    const { registry, received } = tools()
    const toolset = registry.toolset({ session, dialect: 'gemini' })
    const [result] = await toolset.execute([{ id: 'c1', name: 'tag', arguments: { labels: 'env=prod' } }])
    expect(result).toMatchObject({ status: 'error', code: 'invalid_arguments' })
    expect(result.content).toMatch(/^Arguments are invalid: must be a JSON-encoded string/)
    expect(result.content).toContain('$.labels')
    expect(received).toEqual([])
  })

  it('Gemini: a decoded value is held to the exact schema, and the error names its rule', async () => {
    const { registry, received } = tools()
    const toolset = registry.toolset({ session, dialect: 'gemini' })
    const [result] = await toolset.execute([{ id: 'c1', name: 'tag', arguments: { labels: '{"env":1}' } }])
    expect(result).toMatchObject({ status: 'error', code: 'invalid_arguments' })
    expect(result.content).toBe('Invalid arguments:\n- $.labels.env: expected a string, got number 1')
    expect(received).toEqual([])
  })

  it('Gemini: a forbidden key hidden inside an encoded string is refused', async () => {
    const { registry, received } = tools()
    const toolset = registry.toolset({ session, dialect: 'gemini' })
    const [result] = await toolset.execute([{ id: 'c1', name: 'tag', arguments: { extra: '{"__proto__":{"admin":true}}' } }])
    expect(result).toMatchObject({ status: 'error', code: 'invalid_arguments' })
    expect(result.content).toBe('Arguments use a forbidden key at $.extra.__proto__. Rename or remove it.')
    expect(received).toEqual([])
  })

  it('decodes only for the dialect the model was shown: in JSON Schema the dict is an object', async () => {
    const { registry, received } = tools()
    const toolset = registry.toolset({ session })
    toolset.definitions('json')
    const [text] = await toolset.execute([{ id: 'c1', name: 'tag', arguments: { labels: '{"env":"prod"}' } }])
    expect(text.content).toBe('Invalid arguments:\n- $.labels: expected an object, got string "{\\"env\\":\\"prod\\"}"')
    const [object] = await toolset.execute([{ id: 'c2', name: 'tag', arguments: { labels: { env: 'prod' } } }])
    expect(object.status).toBe('ok')
    expect(received).toEqual([{ labels: { env: 'prod' } }])
    // The same toolset shown Gemini next decodes, and shown JSON Schema again stops.
    toolset.definitions('gemini')
    const [gemini] = await toolset.execute([{ id: 'c3', name: 'tag', arguments: { labels: '{"env":"dev"}' } }])
    expect(gemini.status).toBe('ok')
    toolset.definitions('json')
    const [again] = await toolset.execute([{ id: 'c4', name: 'tag', arguments: { labels: '{"env":"dev"}' } }])
    expect(again.code).toBe('invalid_arguments')
    expect(received).toEqual([{ labels: { env: 'prod' } }, { labels: { env: 'dev' } }])
  })

  it('OpenAI: a flattened tagged union still refuses a branch mixed with another, naming the rule', async () => {
    const { registry, received } = tools()
    const toolset = registry.toolset({ session })
    const source = toolset.definitions('openai').find((definition) => definition.function.name === 'source')!
    expect(source.function.strict).toBe(true)
    expect(source.function.parameters.properties).toHaveProperty('path')
    expect(source.function.parameters.properties).toHaveProperty('url')
    // Strict mode sends every key, the absent ones as null.
    const [mixed, right] = await toolset.execute([
      { id: 'c1', name: 'source', arguments: { name: 'n', mode: 'file', path: null, url: 'https://example.test' } },
      { id: 'c2', name: 'source', arguments: { name: 'n', mode: 'url', path: null, url: 'https://example.test' } },
    ])
    expect(mixed).toMatchObject({ status: 'error', code: 'invalid_arguments' })
    expect(mixed.content).toBe('Invalid arguments:\n- $: expected { mode: "file", path: string } | { mode: "url", url: string }, got an object')
    expect(right.status).toBe('ok')
    // schemastery keeps a key no branch declares (here strict mode's null for `path`), as it would anywhere.
    expect(received).toEqual([{ name: 'n', mode: 'url', path: null, url: 'https://example.test' }])
    expect(toolset.loosened('openai').source).toEqual([{ path: '$', rule: 'one of: mode "file" with path (required); mode "url" with url (required)' }])
  })

  it('Gemini: a tool without arguments is declared without parameters', () => {
    const { registry } = tools()
    const ping = registry.toolset({ session }).definitions('gemini').find((definition) => definition.name === 'ping')
    expect(ping).toEqual({ name: 'ping', description: 'Answer pong' })
  })
})
