import { afterEach, describe, expect, it } from 'vitest'
import { request } from 'node:http'
import { defineTool } from '@dogu/core'
import { fromJsonSchema } from '@dogu/schema'
import Schema from 'schemastery'
import { logGuard } from '../../../test-support/log-guard'
import { startConsoleApp, until } from './console-app'

/** A GET with headers fetch does not let a caller set (Host). */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, timeout: 10_000 }, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (chunk) => { text += chunk }).on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }))
    })
    req.on('timeout', () => req.destroy(new Error('timed out')))
    req.on('error', reject).end()
  })
}

let app: Awaited<ReturnType<typeof startConsoleApp>> | undefined

afterEach(async () => {
  await app?.dispose()
  app = undefined
})

describe('WebUI API', () => {
  it('lists tools with effect, groups, owner and the schemastery JSON their forms are made from', async () => {
    app = await startConsoleApp()
    const { status, body } = await app.send('tools.list')
    expect(status).toBe(200)
    const echo = body.find((tool: any) => tool.name === 'echo')
    expect(echo).toMatchObject({ name: 'echo', effect: 'read', groups: [], owner: 'plugin "console-test-tools"', mode: 'eager' })
    const root = echo.schema.refs[echo.schema.uid]
    expect(root.type).toBe('object')
    expect(Object.keys(root.dict)).toEqual(['text', 'times', 'style', 'tags', 'extra', 'options'])
    expect(body.map((tool: any) => tool.name)).toEqual(['deploy', 'echo', 'html', 'task_cancel', 'task_status', 'wait'])
  })

  it('gives a tool that arrived as JSON Schema a form schema through the reverse converter', async () => {
    app = await startConsoleApp()
    app.ctx.plugin({
      name: 'mcp-like',
      inject: ['tools'],
      apply(ctx) {
        ctx.tools.define(defineTool({
          name: 'weather',
          description: 'Weather for a city',
          args: fromJsonSchema({
            type: 'object',
            properties: {
              city: { type: 'string', description: 'City name' },
              unit: { enum: ['c', 'f'], default: 'c' },
            },
            required: ['city'],
          }) as Schema<any, any>,
          traits: { effect: 'read' },
          run: ({ city, unit }: { city: string; unit: string }) => `${city}: 20°${unit.toUpperCase()}`,
        }))
      },
    })
    const tools = (await app.send('tools.list')).body
    const form = new Schema(tools.find((tool: any) => tool.name === 'weather').schema)
    // What the page builds its form from fills defaults and refuses what the tool refuses.
    expect(form({ city: 'Paris' })).toEqual({ city: 'Paris', unit: 'c' })
    expect(() => form({ city: 'Paris', unit: 'k' })).toThrow()
    expect(form.dict!.unit.type).toBe('union')
    const { body } = await app.send('call', { tool: 'weather', args: { city: 'Paris' }, sessionId: 's' })
    expect(body.result.content).toBe('Paris: 20°C')
  })

  it('searches tools with the tool_search index', async () => {
    app = await startConsoleApp()
    const { body } = await app.send('tools.search', { query: 'deploy build' })
    expect(body[0].name).toBe('deploy')
  })

  it('runs a call as a chosen session and user, with the operator\'s authority, and reports progress', async () => {
    app = await startConsoleApp({ authority: 3 })
    const { status, body } = await app.send('call', { tool: 'echo', args: { text: 'hi', times: 2, style: 'shout' }, sessionId: 'chan-1', userId: 'alice' })
    expect(status).toBe(200)
    expect(body.session).toEqual({ id: 'chan-1', userId: 'alice', platform: 'webui', authority: 3 })
    expect(body.result).toMatchObject({ name: 'echo', status: 'ok', content: 'HI HI' })
    expect(body.progress).toEqual(['repeating 2 time(s)'])
  })

  it('refuses a bad value through the pipeline, as the model would see it', async () => {
    app = await startConsoleApp()
    const { body } = await app.send('call', { tool: 'echo', args: '{"text": 5}', sessionId: 's' })
    expect(body.result.status).toBe('error')
    expect(body.result.code).toBe('invalid_arguments')
    expect(body.result.content).toContain('text')
  })

  it('gives the definition per dialect with the paths each dialect loosened', async () => {
    app = await startConsoleApp()
    const { body } = await app.send('definitions', { tool: 'echo' })
    expect(Object.keys(body)).toEqual(['openai', 'anthropic', 'gemini', 'json'])
    expect(body.openai.definition.function.name).toBe('echo')
    expect(body.anthropic.definition.name).toBe('echo')
    expect(body.gemini.loosened.map((l: any) => l.path)).toContain('$.extra')
    expect(body.json.loosened).toEqual([])
  })

  it('is an asker: a call waiting for approval is answered from the console, and a second answer finds it closed', async () => {
    app = await startConsoleApp()
    const call = app.send('call', { tool: 'deploy', args: { env: 'prod' }, sessionId: 'chan-1', userId: 'alice' })
    const [question] = await until(async () => (await app!.send('approvals.list')).body as any[], 'the question')
    expect(question).toMatchObject({ tool: 'deploy', summary: 'deploy(env=prod)', session: { id: 'chan-1', userId: 'alice', platform: 'webui' } })
    // The impersonated user cannot answer: only the console's operator (or an admin) can.
    expect(question.approvers).toEqual({ userId: 'alice', platform: 'webui', authority: 4 })
    expect(await app.send('approvals.answer', { id: question.id, decision: 'allow', scope: 'session' })).toEqual({ status: 200, body: { status: 'accepted' } })
    const { body } = await call
    expect(body.result).toMatchObject({ status: 'ok', content: 'deployed to prod', data: { env: 'prod', ok: true } })
    const again = await app.send('approvals.answer', { id: question.id, decision: 'deny' })
    expect(again.status).toBe(404)
    expect(again.body.error.code).toBe('NOT_FOUND')
    // The session answer became a grant, listed and revocable.
    const grants = (await app.send('grants.list')).body
    expect(grants).toHaveLength(1)
    expect(grants[0]).toMatchObject({ scope: 'session', permission: 'tool:deploy' })
    expect(await app.send('grants.revoke', { id: grants[0].id })).toEqual({ status: 200, body: { revoked: grants[0].id } })
    expect((await app.send('grants.list')).body).toEqual([])
    expect((await app.send('grants.revoke', { id: grants[0].id })).status).toBe(404)
  })

  it('whichever asker answers first settles the question; the console drops it', async () => {
    app = await startConsoleApp()
    app.ctx.permissions.asker((request, { respond }) => {
      if (request.tool === 'deploy') setImmediate(() => respond({ decision: 'deny', by: { id: 'admin', authority: 5 }, reason: 'not today' }))
    })
    const { body } = await app.send('call', { tool: 'deploy', args: { env: 'prod' }, sessionId: 's' })
    expect(body.result.status).toBe('denied')
    expect(body.result.content).toContain('not today')
    expect((await app.send('approvals.list')).body).toEqual([])
  })

  it('lists, waits for and cancels background tasks', async () => {
    app = await startConsoleApp()
    const { body } = await app.send('call', { tool: 'wait', args: {}, sessionId: 's' })
    expect(body.result.status).toBe('background')
    const id = body.result.taskId
    expect((await app.send('tasks.list')).body.map((task: any) => [task.id, task.status])).toEqual([[id, 'running']])
    expect((await app.send('tasks.wait', { id, timeout: 0 })).body.status).toBe('running')
    const cancelled = await app.send('tasks.cancel', { id })
    expect(cancelled.body).toMatchObject({ id, status: 'cancelled' })
    expect((await app.send('tasks.cancel', { id: 'task_nope' })).status).toBe(404)
  })

  it('sets and reads a session\'s mode', async () => {
    app = await startConsoleApp()
    expect((await app.send('modes.set', { sessionId: 's', mode: 'readOnly' })).body).toEqual({ sessionId: 's', mode: 'readOnly' })
    expect((await app.send('modes.get', { sessionId: 's' })).body).toEqual({ sessionId: 's', mode: 'readOnly', modes: ['default', 'readOnly', 'acceptEdits', 'trust'] })
    const { body } = await app.send('call', { tool: 'deploy', args: { env: 'prod' }, sessionId: 's' })
    expect(body.result.status).toBe('denied')
    expect((await app.send('modes.set', { sessionId: 's', mode: 'nope' })).body.error.code).toBe('INVALID_PAYLOAD')
  })

  it('keeps the last N calls and decisions in the live log', async () => {
    app = await startConsoleApp({ logSize: 3 })
    await app.send('call', { tool: 'echo', args: { text: 'a' }, sessionId: 's' })
    const log = (await app.send('log.list')).body
    expect(log.map((entry: any) => entry.kind)).toEqual(['decision', 'call-progress', 'call-end'])
    expect(log[2]).toMatchObject({ tool: 'echo', sessionId: 's', status: 'ok' })
    expect((await app.send('log.list', { since: log[1].seq })).body).toEqual([log[2]])
  })

  it('never sends a secret field in clear: approvals.list and log.list show it as ••••, the tool gets it', async () => {
    app = await startConsoleApp({ logSize: 50 })
    const TOKEN = 'sk-console-5e6f7a8b'
    const KEY = 'ssh-console-0xC0FFEE'
    const args = Schema.object({
      env: Schema.string().required(),
      token: Schema.string().role('secret').required(),
      servers: Schema.array(Schema.object({ host: Schema.string(), key: Schema.string().role('secret') })),
      note: Schema.string(),
    })
    app.ctx.plugin({
      name: 'secret-tools',
      inject: ['tools'],
      apply(ctx) {
        ctx.tools.define(defineTool({
          name: 'release',
          description: 'Release with a token',
          args,
          traits: { effect: 'write' },
          run: ({ token, servers }) => `token ${token === TOKEN ? 'right' : 'wrong'}, key ${servers?.[0]?.key === KEY ? 'right' : 'wrong'}`,
        }))
      },
    })
    await until(async () => (await app!.send('tools.list')).body.some((tool: any) => tool.name === 'release'), 'the tool')
    // `note` holds the token's text but is not secret: it stays as sent.
    const call = app.send('call', { tool: 'release', args: { env: 'prod', token: TOKEN, servers: [{ host: 'a', key: KEY }], note: TOKEN }, sessionId: 's' })
    const questions = await until(async () => (await app!.send('approvals.list')).body as any[], 'the question')
    const [question] = questions
    expect(question.summary).toBe(`release(env=prod, token="••••", servers=[{"host":"a","key":"••••"}], note=${TOKEN})`)
    expect(question.args).toEqual({ env: 'prod', token: '••••', servers: [{ host: 'a', key: '••••' }], note: TOKEN })
    expect(JSON.stringify(questions).replaceAll(`note=${TOKEN}`, '').replaceAll(`"note":"${TOKEN}"`, '')).not.toMatch(new RegExp(`${TOKEN}|${KEY}`))
    await app.send('approvals.answer', { id: question.id, decision: 'allow' })
    expect((await call).body.result).toMatchObject({ status: 'ok', content: 'token right, key right' })
    const log = (await app.send('log.list')).body as any[]
    const start = log.find((entry) => entry.kind === 'call-start' && entry.tool === 'release')
    expect(start.args).toEqual({ env: 'prod', token: '••••', servers: [{ host: 'a', key: '••••' }], note: TOKEN })
    expect(JSON.stringify(log).replaceAll(`"note":"${TOKEN}"`, '')).not.toMatch(new RegExp(`${TOKEN}|${KEY}`))
  })

  it('reads by GET, and refuses a state change by GET', async () => {
    app = await startConsoleApp()
    const read = await fetch(`${app.base}/api/modes.get?payload=${encodeURIComponent('{"sessionId":"s"}')}`)
    expect(read.status).toBe(200)
    expect((await read.json()).mode).toBe('default')
    const write = await fetch(`${app.base}/api/modes.set?payload=${encodeURIComponent('{"sessionId":"s","mode":"trust"}')}`)
    expect(write.status).toBe(405)
    expect((await write.json()).error.code).toBe('METHOD_NOT_ALLOWED')
    expect(app.ctx.permissions.modeOf('s')).toBe('default')
  })

  it('refuses a cross-site request: another Origin, a non-JSON POST, a Host that is not this console', async () => {
    app = await startConsoleApp()
    expect((await app.send('modes.set', { sessionId: 's', mode: 'trust' }, { origin: 'http://evil.example' })).status).toBe(403)
    const form = await fetch(`${app.base}/api/modes.set`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"sessionId":"s","mode":"trust"}' })
    expect(form.status).toBe(400)
    const rebinding = await rawGet(`${app.base}/api/grants.list`, { host: 'evil.example' })
    expect(rebinding).toEqual({ status: 403, body: { error: { code: 'FORBIDDEN', message: 'Host header "evil.example" does not name this console (127.0.0.1:' + new URL(app.base).port + ')' } } })
    expect(app.ctx.permissions.modeOf('s')).toBe('default')
  })

  it('with a token set, refuses a request without it or with a wrong one', async () => {
    app = await startConsoleApp({ token: 'a-long-secret-token-123' })
    expect((await app.send('tools.list')).status).toBe(200)
    const none = await fetch(`${app.base}/api/tools.list`)
    expect(none.status).toBe(401)
    expect((await none.json()).error).toEqual({ code: 'UNAUTHORIZED', message: 'this console needs its token in the x-dogu-token header' })
    expect((await app.send('modes.set', { sessionId: 's', mode: 'trust' }, { 'x-dogu-token': 'a-long-secret-token-124' })).status).toBe(401)
    expect(app.ctx.permissions.modeOf('s')).toBe('default')
  })

  it('needs a token to listen on a host other machines can reach', async () => {
    // Reported by the console's fiber, and by the root's again as the harness disposes the app.
    logGuard.expect('ConsoleError: the console listens on 0.0.0.0, which other machines can reach: set a token')
    await expect(startConsoleApp({ host: '0.0.0.0' })).rejects.toThrow('the console listens on 0.0.0.0, which other machines can reach: set a token')
  })

  it('names unknown methods and bad payloads', async () => {
    app = await startConsoleApp()
    expect(await app.send('nope')).toEqual({ status: 404, body: { error: { code: 'UNKNOWN_METHOD', message: 'no console method "nope"' } } })
    const huge = await app.send('tools.search', { query: 'x'.repeat(2_000_001) })
    expect(huge).toEqual({ status: 400, body: { error: { code: 'INVALID_PAYLOAD', message: 'the request body is larger than 2000000 bytes' } } })
    const bad = await app.send('tasks.wait', { id: 'x', timeout: 120_000 })
    expect(bad.status).toBe(400)
    expect(bad.body.error.code).toBe('INVALID_PAYLOAD')
  })

  it('stops asking when disposed: a question nobody else can answer is denied at once', async () => {
    app = await startConsoleApp()
    await app.fiber.dispose()
    expect(app.ctx.get('webui')).toBeUndefined()
    const { body } = await app.ctx.tools.registry.execute([{ id: 'c1', name: 'deploy', arguments: { env: 'prod' } }], { session: { id: 's' } }).then((results) => ({ body: results[0] }))
    expect(body).toMatchObject({ status: 'denied', code: 'permission_denied' })
    expect(body.content).toContain('no asker is registered')
  })

  it('stops listening when disposed', async () => {
    app = await startConsoleApp()
    const { base } = app
    await app.dispose()
    app = undefined
    await expect(fetch(`${base}/api/tools.list`)).rejects.toThrow()
  })
})
