import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createFsTools } from '@dogu/fs'
import { afterEach, describe, expect, it } from 'vitest'
import { startConsoleApp } from './console-app'

let app: Awaited<ReturnType<typeof startConsoleApp>> | undefined
let workspace: string | undefined

afterEach(async () => {
  await app?.dispose()
  app = undefined
  if (workspace) await rm(workspace, { recursive: true, force: true })
  workspace = undefined
})

/** A GET whose path fetch would normalize first (`..` segments). */
function rawGet(url: string, path: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { path, timeout: 10_000 }, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (chunk) => { text += chunk }).on('end', () => resolve({ status: res.statusCode!, text }))
    })
    req.on('timeout', () => req.destroy(new Error('timed out')))
    req.on('error', reject).end()
  })
}

describe('WebUI file changes', () => {
  it('lists @dogu/fs changes with their diff and undoes one', async () => {
    app = await startConsoleApp()
    workspace = await mkdtemp(join(tmpdir(), 'dogu-webui-fs-'))
    await writeFile(join(workspace, 'a.txt'), 'one\ntwo\n')
    const fs = createFsTools({ workspace })
    app.ctx.plugin({
      name: 'fs-pack',
      inject: ['tools', 'webui'],
      apply(ctx) {
        ctx.tools.define(fs.tools.edit)
        ctx.webui.addChangeLog(fs.changes)
      },
    })
    await app.send('modes.set', { sessionId: 's', mode: 'acceptEdits' })
    const { body } = await app.send('call', { tool: 'edit', args: { path: 'a.txt', oldText: 'two', newText: 'three' }, sessionId: 's' })
    expect(body.result).toMatchObject({ status: 'ok' })
    const changes = (await app.send('changes.list')).body
    expect(changes).toHaveLength(1)
    expect(changes[0]).toMatchObject({ path: 'a.txt', type: 'modified', added: 1, removed: 1, tool: 'edit', sessionId: 's' })
    expect(changes[0].hunks[0].lines).toEqual([' one', '-two', '+three'])
    expect(changes[0]).not.toHaveProperty('prior')
    const undo = await app.send('changes.undo', { id: changes[0].id })
    expect(undo.body).toMatchObject({ status: 'undone', action: 'restored', path: 'a.txt' })
    expect(await readFile(join(workspace, 'a.txt'), 'utf8')).toBe('one\ntwo\n')
    expect((await app.send('changes.undo', { id: 'nope' })).status).toBe(404)
  })
})

describe('WebUI page', () => {
  it('serves the built page at /dogu and nothing outside its folder', async () => {
    app = await startConsoleApp()
    const page = await fetch(app.base)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'")
    expect(await page.text()).toContain('<div id="app"></div>')
    const escape = await rawGet(app.base, '/dogu/..%2f..%2fpackage.json')
    expect(escape).toEqual({ status: 404, text: 'not found' })
    expect((await rawGet(app.base, '/dogu/../package.json')).status).toBe(404)
  })
})
