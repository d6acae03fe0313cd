import { defineTool } from '@dogu/core'
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { afterEach, describe, expect, it } from 'vitest'
import { startConsoleApp } from './console-app'

const TOKEN = 'console-token-9a8b7c6d5e4f'
const session = { id: 's1', userId: 'u1' }

let app: Awaited<ReturnType<typeof startConsoleApp>> | undefined

afterEach(async () => {
  await app?.dispose()
  app = undefined
})

describe('redact: the console\'s token', () => {
  it('a tool that shows the token gives [redacted] to the caller and to the console\'s live log', async () => {
    app = await startConsoleApp({ token: TOKEN })
    // What a tool that dumps the app's config or a request's headers would return.
    await app.ctx.plugin({
      name: 'dumper',
      inject: ['tools'],
      apply(ctx: Context) {
        ctx.tools.define(defineTool({
          name: 'dump',
          description: 'Dump the console config',
          args: Schema.object({}),
          traits: { effect: 'read' },
          run: (_args, call) => {
            call.progress(`reading x-dogu-token: ${TOKEN}`)
            return { text: `x-dogu-token: ${TOKEN}`, data: { headers: { 'x-dogu-token': TOKEN } } }
          },
        }))
      },
    })
    const { status, body } = await app.send('call', { tool: 'dump', args: {}, sessionId: 's' })
    expect(status).toBe(200)
    expect(body.result).toMatchObject({ status: 'ok', content: 'x-dogu-token: [redacted]', data: { headers: { 'x-dogu-token': '[redacted]' } } })
    expect(body.progress).toEqual(['reading x-dogu-token: [redacted]'])
    const log = (await app.send('log.list')).body
    expect(log.length).toBeGreaterThan(0)
    expect(JSON.stringify(log)).not.toContain(TOKEN)
    const [direct] = await app.ctx.tools.execute([{ id: 'c1', name: 'echo', arguments: { text: TOKEN } }], { session })
    expect(direct.content).toBe('[redacted]')

    // The console goes, and its token with it.
    await app.fiber.dispose()
    const [after] = await app.ctx.tools.execute([{ id: 'c2', name: 'echo', arguments: { text: TOKEN } }], { session })
    expect(after.content).toBe(TOKEN)
  })

  it('declares nothing without a token', async () => {
    app = await startConsoleApp()
    expect(app.ctx.tools.registry.redactor.active).toBe(false)
  })
})
