// A question still open when the app stops is listed by the console after the restart
// (`permissions.durable`, docs/permissions.md), marked as from before it; answered there, its
// call runs once as a background task. Two console apps, one after the other, on one folder.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { openBrowser } from './browser'
import { startConsoleApp, until } from './console-app'

let browser: Awaited<ReturnType<typeof openBrowser>>
let app: Awaited<ReturnType<typeof startConsoleApp>> | undefined
let page: Page | undefined
let dir: string

beforeAll(async () => {
  browser = await openBrowser({ locale: 'zh-CN' })
})
afterAll(async () => {
  await browser?.close()
})
afterEach(async () => {
  await page?.close()
  page = undefined
  await app?.dispose()
  app = undefined
  await rm(dir, { recursive: true, force: true })
})

/** Asks about `deploy` from the console's session, then stops the app before anyone answers. */
async function askThenStop() {
  dir = await mkdtemp(join(tmpdir(), 'dogu-webui-restored-'))
  const first = await startConsoleApp({}, { dir })
  // In the process, not over HTTP: the stop closes the console's server under a waiting request.
  const call = first.ctx.tools.execute([{ id: 'c1', name: 'deploy', arguments: { env: 'prod' } }], { session: { id: 'chan-1', userId: 'alice', platform: 'webui' } })
  const [asked] = await until(async () => (await first.send('approvals.list')).body as any[], 'the question')
  expect(asked.restored).toBeUndefined()
  await first.dispose()
  expect((await call)[0]).toMatchObject({ status: 'denied', content: expect.stringContaining('interrupted while waiting for approval') })
  return asked
}

describe('a question from before a restart, in the console', () => {
  it('approvals.list lists it again, marked restored with a new id; approvals.answer runs it once as a background task and says which', async () => {
    const asked = await askThenStop()
    app = await startConsoleApp({}, { dir })
    const [question] = await until(async () => (await app!.send('approvals.list')).body as any[], 'the question asked again')
    expect(question).toMatchObject({ tool: 'deploy', summary: 'deploy(env=prod)', restored: { originalId: asked.id }, createdAt: asked.createdAt, expiresAt: asked.expiresAt })
    expect(question.id).not.toBe(asked.id)
    // The old id is refused: it belonged to the request that lived before the restart.
    expect((await app.send('approvals.answer', { id: asked.id, decision: 'allow' })).body.error.code).toBe('NOT_FOUND')
    const answered = await app.send('approvals.answer', { id: question.id, decision: 'allow' })
    expect(answered).toMatchObject({ status: 200, body: { status: 'accepted', taskId: expect.stringMatching(/^task_/) } })
    const task = (await app.send('tasks.wait', { id: answered.body.taskId })).body
    expect(task).toMatchObject({ tool: 'deploy', status: 'succeeded', session: { id: 'chan-1' }, result: { content: 'deployed to prod' } })
    expect((await app.send('approvals.list')).body).toEqual([])
    expect((await app.send('approvals.answer', { id: question.id, decision: 'allow' })).body.error.code).toBe('NOT_FOUND')
  })

  it('a deny rule added while the app was down: the answer is refused with why (409 REFUSED), and nothing runs', async () => {
    await askThenStop()
    app = await startConsoleApp({}, { dir })
    app.ctx.permissions.rule({ permission: 'tool:deploy', decision: 'deny', name: 'freeze' })
    const [question] = await until(async () => (await app!.send('approvals.list')).body as any[], 'the question asked again')
    const refused = await app.send('approvals.answer', { id: question.id, decision: 'allow' })
    expect(refused.status).toBe(409)
    expect(refused.body.error).toMatchObject({ code: 'REFUSED', message: expect.stringContaining('freeze') })
    expect((await app.send('tasks.list')).body).toEqual([])
    expect((await app.send('approvals.list')).body).toEqual([])
  })

  it('the page marks it 重启前提出, and its Allow button runs it', async () => {
    await askThenStop()
    app = await startConsoleApp({}, { dir })
    await until(async () => (await app!.send('approvals.list')).body as any[], 'the question asked again')
    page = await browser.context.newPage()
    await page.goto(app.base)
    await page.click('[data-test=tab-approvals]')
    await expect.poll(() => page!.textContent('[data-test=approval-restored]')).toBe('重启前提出')
    await page.click('[data-test=allow-once]')
    await until(async () => ((await app!.send('tasks.list')).body as any[]).filter((task) => task.status === 'succeeded'), 'the task')
    await expect.poll(() => page!.locator('[data-test=approval-restored]').count()).toBe(0)
  })
})
