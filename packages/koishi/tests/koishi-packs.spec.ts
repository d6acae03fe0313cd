import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { existsSync, readdirSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import * as Lookup from '@dogu-external/lookup'
import * as Notes from '@dogu-external/notes'
import { defineTool, toolDefinition } from '@dogu/core'
import Fs from '@dogu/fs'
import * as Http from '@dogu/http'
import * as Shell from '@dogu/shell'
import { type Context, Schema } from 'koishi'
import Schemastery from 'schemastery'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { koishiApp, loadPlugin, settle } from './koishi-app'

const session = { id: 'mock:456', userId: '123', platform: 'mock', authority: 1 }

async function call(app: Context, name: string, args: object) {
  const [result] = await app.tools.execute([{ id: `c-${name}`, name, arguments: args as Record<string, unknown> }], { session })
  return result
}

describe('a tool declared with Koishi\'s own Schema', () => {
  it('is advertised, validated and defaulted like one declared with schemastery', async () => {
    const { app } = await koishiApp()
    const args = Schema.object({
      city: Schema.string().required().description('City name'),
      unit: Schema.union(['c', 'f'] as const).default('c').description('Temperature unit'),
    })
    app.plugin({
      name: 'weather',
      inject: ['tools'],
      apply(ctx: Context) {
        ctx.tools.define(defineTool({ name: 'weather', description: 'Weather', args, traits: { effect: 'read' }, run: ({ city, unit }) => `${city} 21°${unit}` }))
      },
    })
    await settle(app)
    // The same schema built with the workspace's own schemastery, for comparison.
    const twin = defineTool({
      name: 'weather',
      description: 'Weather',
      args: Schemastery.object({
        city: Schemastery.string().required().description('City name'),
        unit: Schemastery.union(['c', 'f'] as const).default('c').description('Temperature unit'),
      }),
      run: () => '',
    })
    const toolset = app.tools.toolset({ session, include: ['weather'] })
    for (const dialect of ['json', 'openai', 'anthropic', 'gemini'] as const) {
      expect(toolset.definitions(dialect)).toEqual([toolDefinition(twin, dialect)])
    }
    expect(toolset.definitions('json')[0].parameters).toMatchObject({ properties: { city: { type: 'string', description: 'City name' } }, required: ['city'] })
    expect(await call(app, 'weather', { city: 'Hangzhou' })).toMatchObject({ status: 'ok', content: 'Hangzhou 21°c' })
    expect(await call(app, 'weather', { unit: 'k' })).toMatchObject({ status: 'error', code: 'invalid_arguments' })
  })
})

describe('the tool packs load in Koishi', () => {
  it('@dogu/fs: reads and writes in its workspace, asks its permissions, and goes with its plugin', async () => {
    const { app, dir } = await koishiApp({ dogu: { permissions: { rules: [{ permission: 'fs.write', target: 'notes/**', decision: 'allow' }] } } })
    const workspace = join(dir, 'workspace')
    await mkdir(join(workspace, 'notes'), { recursive: true })
    await writeFile(join(workspace, 'notes/a.txt'), 'hello\n')
    const fs = loadPlugin(app, Fs, { workspace })
    await settle(app)
    expect(app.tools.filter({ exclude: ['task_*'] }).map((tool) => tool.name)).toEqual(['edit', 'glob', 'grep', 'list', 'read', 'write'])
    expect(await call(app, 'read', { path: 'notes/a.txt' })).toMatchObject({ status: 'ok', content: 'hello\n' })
    expect(await call(app, 'write', { path: 'notes/b.txt', content: 'new' })).toMatchObject({ status: 'ok' })
    expect(await readFile(join(workspace, 'notes/b.txt'), 'utf8')).toBe('new')
    expect(await call(app, 'write', { path: 'other.txt', content: 'x' })).toMatchObject({ status: 'denied' })
    fs.dispose()
    expect(app.tools.get('read')).toBeUndefined()
  })

  it('@dogu/shell: runs a read-only command line, and a disposal takes the tool away', async () => {
    const { app, dir } = await koishiApp()
    const shell = loadPlugin(app, Shell, { workspace: dir })
    await settle(app)
    expect(await call(app, 'bash', { command: 'echo hi' })).toMatchObject({ status: 'ok', content: expect.stringContaining('hi') })
    expect(await call(app, 'bash', { command: 'touch x' })).toMatchObject({ status: 'denied' })
    shell.dispose()
    expect(app.tools.get('bash')).toBeUndefined()
  })

  it('@dogu/shell: a `sandboxed: true` rule lets sandboxed commands run, and Koishi\'s app folder is hidden from them', async () => {
    const { app, dir } = await koishiApp({ dogu: { permissions: { rules: [{ permission: 'shell', sandboxed: true, decision: 'allow' }] } } })
    loadPlugin(app, Shell, { workspace: dir })
    await settle(app)
    expect(await call(app, 'bash', { command: 'touch made-in-sandbox' })).toMatchObject({ status: 'ok', data: { sandbox: 'full' } })
    expect(existsSync(join(dir, 'made-in-sandbox'))).toBe(true)
    // koishi.yml, .env and data/ live in ctx.baseDir: the sandbox shows it empty.
    expect(readdirSync(app.baseDir).length).toBeGreaterThan(0)
    expect(await call(app, 'bash', { command: `ls -A ${app.baseDir}` })).toMatchObject({ status: 'ok', data: { sandbox: 'full', stdout: { text: '' } } })
  })

  describe('@dogu/http', () => {
    let server: Server
    let origin: string
    beforeAll(async () => {
      server = createServer((req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(`hello ${req.method} ${req.headers.host}`))
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    })
    afterAll(async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    })

    it('fetches from a loopback server it is allowed to reach, without Cordis 4\'s ctx.http', async () => {
      const { app } = await koishiApp({ dogu: { permissions: { rules: [{ permission: 'http', decision: 'allow' }] } } })
      const http = loadPlugin(app, Http, { allow: ['127.0.0.1'] })
      await settle(app)
      const result = await call(app, 'http_fetch', { url: `${origin}/x` })
      expect(result).toMatchObject({ status: 'ok', data: { status: 200, finalUrl: `${origin}/x` } })
      expect(result.content).toContain(`hello GET 127.0.0.1:${(server.address() as AddressInfo).port}`)
      // The SSRF guard stands: another loopback address is refused.
      expect(await call(app, 'http_fetch', { url: `http://127.0.0.2:${(server.address() as AddressInfo).port}/` })).toMatchObject({ status: 'error', content: expect.stringContaining('refused to connect to 127.0.0.2') })
      http.dispose()
      expect(app.tools.get('http_fetch')).toBeUndefined()
    })
  })
})

describe('the external plugins load unchanged in Koishi', () => {
  it('lookup: a read-only tool, with its config', async () => {
    const { app } = await koishiApp()
    loadPlugin(app, Lookup, { limit: 2 })
    await settle(app)
    const result = await call(app, 'lookup', { q: '巴黎' })
    expect(result).toMatchObject({ status: 'ok', content: 'France (法国, FR): capital Paris (巴黎)' })
  })

  it('notes: adding is allowed by a rule, deleting asks (and nobody can answer)', async () => {
    const { app, dir } = await koishiApp({ dogu: { permissions: { rules: [{ permission: 'notes', target: 'add', decision: 'allow' }] } } })
    const notes = loadPlugin(app, Notes, { dataDir: dir })
    await settle(app)
    expect(await call(app, 'notes', { action: 'add', text: 'buy milk' })).toMatchObject({ status: 'ok', content: 'Added note #1.' })
    expect(await call(app, 'notes', { action: 'list' })).toMatchObject({ status: 'ok', content: '#1 buy milk' })
    expect(await call(app, 'notes', { action: 'delete', id: 1 })).toMatchObject({ status: 'denied' })
    notes.dispose()
    expect(app.tools.get('notes')).toBeUndefined()
  })
})
