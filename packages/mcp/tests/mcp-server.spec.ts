import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Harness, startHarness, type TransportKind } from './server-harness'

const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII='

describe.each(['http', 'stdio'] as TransportKind[])('Dogu MCP server over %s, with the official SDK client', (kind) => {
  let harness: Harness
  let client: Client
  const asked: string[] = []
  let answer: 'once' | 'deny' | 'decline' = 'once'

  beforeAll(async () => {
    harness = await startHarness(kind)
    client = await harness.connect({
      elicit: (message) => {
        asked.push(message)
        if (answer === 'decline') return { action: 'decline' }
        return { action: 'accept', content: { decision: answer } }
      },
    })
  })
  afterAll(() => harness?.close())

  it('lists the toolset with annotations from traits', async () => {
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name)).toEqual(['broken', 'cancellations', 'deploy', 'grow', 'lookup', 'notes', 'picture', 'slow', 'task_cancel', 'task_status', 'whoami'])
    const byName = new Map(tools.map((tool) => [tool.name, tool]))
    expect(byName.get('lookup')).toEqual({
      name: 'lookup',
      description: 'Find a word',
      inputSchema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: { q: { type: 'string', minLength: 1, description: 'The word' } },
        required: ['q'],
      },
      annotations: { readOnlyHint: true, destructiveHint: false },
      // With a background service loaded, a tool that may move there (the default) may start there: an MCP task.
      execution: { taskSupport: 'optional' },
    })
    expect(byName.get('notes')!.annotations).toEqual({ readOnlyHint: false, destructiveHint: true, openWorldHint: false })
    expect(byName.get('deploy')!.annotations).toEqual({ readOnlyHint: false, destructiveHint: true, openWorldHint: true })
  })

  it('calls a tool: text, images as image content, errors as isError with the text the model reads', async () => {
    expect(await client.callTool({ name: 'lookup', arguments: { q: 'tea' } })).toMatchObject({ content: [{ type: 'text', text: 'found tea' }] })
    expect((await client.callTool({ name: 'lookup', arguments: { q: 'tea' } })).isError).toBeUndefined()
    expect(await client.callTool({ name: 'picture', arguments: {} })).toMatchObject({
      content: [{ type: 'text', text: 'one pixel' }, { type: 'image', mimeType: 'image/png', data: PIXEL }],
    })
    expect(await client.callTool({ name: 'broken', arguments: {} })).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'Error: the disk is on fire' }],
      _meta: { 'dogu.dev/result': { status: 'error', code: 'tool_error' } },
    })
    const invalid = await client.callTool({ name: 'lookup', arguments: { q: '' } })
    expect(invalid).toMatchObject({ isError: true, _meta: { 'dogu.dev/result': { status: 'error', code: 'invalid_arguments' } } })
    expect((invalid.content as any)[0].text).toContain('$.q')
    // A tool the server does not have is a JSON-RPC error (-32602), as the specification has it.
    await expect(client.callTool({ name: 'lookp', arguments: {} })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Did you mean "lookup"?') })
  })

  it('runs each connection as its own Dogu session mcp:<client>:<session>, with the default authority', async () => {
    const result = await client.callTool({ name: 'whoami', arguments: {} })
    const session = result.structuredContent as Record<string, unknown>
    // The user is who the connection authenticated as (stdio: the server's `user`; http without a token: anonymous), not the client's name.
    expect(session).toMatchObject({ userId: kind === 'stdio' ? 'stdio' : 'anonymous', platform: 'mcp', authority: 1 })
    expect(session.id).toMatch(/^mcp:test-client:[0-9a-f-]{36}$/)
    if (kind === 'http') expect(session.id).toBe(`mcp:test-client:${(client.transport as any).sessionId}`)
  })

  it('asks the client as an elicitation: an answer of once runs the write, data becomes structuredContent', async () => {
    asked.length = 0
    answer = 'once'
    const result = await client.callTool({ name: 'notes', arguments: { text: 'hi' } })
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'saved hi' }], structuredContent: { saved: 'hi', length: 2 } })
    expect(result.isError).toBeUndefined()
    expect(asked).toEqual(['Allow notes(text=hi)? no rule matches; write tools need approval by default'])
  })

  it('an elicitation declined or answered deny ends the call denied', async () => {
    asked.length = 0
    answer = 'decline'
    const declined = await client.callTool({ name: 'notes', arguments: { text: 'no' } })
    expect(declined).toMatchObject({ isError: true, _meta: { 'dogu.dev/result': { status: 'denied', code: 'permission_denied' } } })
    const user = kind === 'stdio' ? 'stdio' : 'anonymous'
    expect((declined.content as any)[0].text).toBe(`Permission denied: mcp:${user} declined it: the MCP client declined the request`)
    answer = 'deny'
    const denied = await client.callTool({ name: 'deploy', arguments: { env: 'prod' } })
    expect((denied.content as any)[0].text).toBe(`Permission denied: mcp:${user} declined it: denied in the MCP client`)
    expect(asked).toHaveLength(2)
    // The tool's preview is in the message, bounded, saying how much was left out.
    const hosts = Array.from({ length: 59 }, (_, i) => `host-${i + 1}.prod.example`)
    const left = Array.from({ length: 21 }, (_, i) => `\nhost-${i + 60}.prod.example`).join('').length
    expect(asked[1]).toBe([
      'Allow deploy(env=prod)? no rule matches; exec tools need approval by default',
      '',
      '$ deploy --env prod',
      ...hosts,
      `… 21 more lines, ${left} more characters of the preview not shown`,
    ].join('\n'))
  })

  it('a client without elicitation, with no other asker, is denied at once', async () => {
    const plain = await harness.connect({ name: 'plain' })
    // Expected, and documented: no warning (the guard fails the test on one, over http from
    // the app), and a denial that says nobody could be asked. Over stdio dogu-mcp prints its
    // info lines on stderr (stdout is the protocol's): that one line, no stack.
    if (kind === 'stdio') harness.guard.expect(/^\[dogu-mcp\] permission request perm_\S+ \(notes\(text=x\)\) of session mcp:plain:\S+ cannot be shown by one of its askers: the MCP client cannot show questions: it declared no elicitation$/)
    const result = await plain.callTool({ name: 'notes', arguments: { text: 'x' } })
    expect(result).toMatchObject({ isError: true, _meta: { 'dogu.dev/result': { status: 'denied' } } })
    expect((result.content as any)[0].text).toBe('Permission denied: nobody could be asked to approve notes (the MCP client cannot show questions: it declared no elicitation)')
    await harness.flush()
  })

  it('forwards progress and cancels the call when the client aborts', async () => {
    const messages: string[] = []
    const controller = new AbortController()
    const call = client.callTool({ name: 'slow', arguments: {} }, undefined, {
      signal: controller.signal,
      onprogress: (progress) => {
        messages.push(`${progress.progress}:${progress.message}`)
        if (messages.length === 2) controller.abort(new Error('enough'))
      },
    })
    await expect(call).rejects.toThrow('enough')
    expect(messages).toEqual(['1:step 1', '2:step 2'])
    // The cancellation reaches the tool's signal; poll its count with a bounded number of calls.
    let count = '0'
    for (let i = 0; i < 50 && count === '0'; i++) count = ((await client.callTool({ name: 'cancellations', arguments: {} })).content as any)[0].text
    expect(count).toBe('1')
  })

  it('sends notifications/tools/list_changed when a tool is defined or removed', async () => {
    let notified = 0
    let wake: () => void = () => {}
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      notified++
      wake()
    })
    const changed = () => new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no list_changed within 10 s')), 10_000)
      wake = () => { clearTimeout(timer); resolve() }
    })
    let next = changed()
    expect((await client.callTool({ name: 'grow', arguments: {} })).content).toEqual([{ type: 'text', text: 'defined extra' }])
    await next
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('extra')
    next = changed()
    await client.callTool({ name: 'grow', arguments: {} })
    await next
    expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('extra')
    expect(notified).toBe(2)
  })
})
