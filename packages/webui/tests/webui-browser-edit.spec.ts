import { join } from 'node:path'
import { defineTool } from '@dogu/core'
import type { Context } from 'cordis'
import type { BrowserContext, Page } from 'playwright-core'
import Schema from 'schemastery'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { openBrowser } from './browser'
import { startConsoleApp, until } from './console-app'

// Editing a call's arguments on its approval card before approving it (docs/webui.md,
// "Editing before approving (console)").

let browser: Awaited<ReturnType<typeof openBrowser>>
let context: BrowserContext
let app: Awaited<ReturnType<typeof startConsoleApp>> | undefined
let page: Page | undefined

beforeAll(async () => {
  browser = await openBrowser()
  context = browser.context
})

afterAll(async () => {
  await browser?.close()
})

afterEach(async () => {
  await page?.close()
  page = undefined
  await app?.dispose()
  app = undefined
})

/**
 * With DOGU_SCREENSHOTS=1, the pictures of docs/webui.md's edit section (English, and `.zh-CN`) are taken from this run:
 * `DOGU_SCREENSHOTS=1 yarn vitest run packages/webui/tests/webui-browser-edit.spec.ts`.
 */
async function screenshot(page: Page, name: string) {
  if (process.env.DOGU_SCREENSHOTS === '1') await page.screenshot({ path: join(__dirname, `../../../docs/images/${name}.png`) })
}

const TOKEN = 'tok-browser-9f8e7d'

/** The input of a form field, found by the key the form shows. */
const field = (page: Page, key: string) =>
  page.locator('.k-schema-item', { has: page.locator('h3', { hasText: new RegExp(`^${key}$`) }) }).locator('input').first()

/**
 * The console with one more tool, `tail` (write: asked), that reads `limit` lines of `path`
 * with a secret `token`; a call to it waits on the Approvals view, its card open.
 */
async function asked(args: { path: string; limit: number; token?: string }) {
  app = await startConsoleApp()
  const runs: unknown[] = []
  await app.ctx.plugin({
    name: 'edit-tools',
    inject: ['tools'],
    apply(ctx: Context) {
      ctx.tools.define(defineTool({
        name: 'tail',
        description: 'The last lines of a file',
        args: Schema.object({
          path: Schema.string().required().description('The file'),
          limit: Schema.natural().min(1).max(100).default(10).description('How many lines'),
          token: Schema.string().role('secret').description('Access token'),
        }),
        traits: { effect: 'write' },
        run: (args: { path: string; limit: number }) => {
          runs.push(args)
          return `${args.limit} lines of ${args.path}`
        },
      }))
    },
  })
  const call = app.send('call', { tool: 'tail', args, sessionId: 'chan-1', userId: 'alice' })
  await until(async () => (await app!.send('approvals.list')).body as any[], 'the question')
  page = await context.newPage()
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(error.message))
  await page.goto(app.base)
  await page.click('[data-test=tab-approvals]')
  const card = page.locator('[data-test=approval-tail]')
  await card.waitFor()
  return { page, card, call, runs, errors }
}

describe('an approver edits a call on its card before approving it', () => {
  it('changes limit in the form, sees the change listed, and the tool runs with the edited limit', async () => {
    const { page, card, call, runs, errors } = await asked({ path: '/var/log/app.log', limit: 50, token: TOKEN })
    // The plain answers stay as they were; Edit opens the form filled with the model's arguments.
    expect(await card.locator('[data-test=allow-once]').isVisible()).toBe(true)
    expect(await card.locator('[data-test=edit-approval]').count()).toBe(0)
    await card.locator('[data-test=edit]').click()
    const editor = card.locator('[data-test=edit-approval]')
    await editor.waitFor()
    expect(await field(page, 'path').inputValue()).toBe('/var/log/app.log')
    expect(await field(page, 'limit').inputValue()).toBe('50')
    // The secret shows masked, never in clear.
    expect(await field(page, 'token').inputValue()).toBe('••••')
    expect(await page.content()).not.toContain(TOKEN)
    expect(await editor.locator('[data-test=edit-no-changes]').textContent()).toBe('No changes yet.')

    await field(page, 'limit').fill('5')
    await expect.poll(() => editor.locator('[data-test=edit-change]').allInnerTexts()).toEqual(['$.limit: 50 → 5'])
    // schemastery-vue marks the field changed against the model's values.
    expect(await page.locator('.k-schema-item.changed', { has: page.locator('h3', { hasText: /^limit$/ }) }).count()).toBe(1)
    // The list is polled every second: what was typed stays.
    await page.waitForTimeout(1_300)
    expect(await field(page, 'limit').inputValue()).toBe('5')
    await screenshot(page, 'webui-approval-edit')
    // The page's language switch: the same form in Chinese, the edit kept.
    await page.selectOption('[data-test=language]', 'zh-CN')
    await expect.poll(() => card.locator('[data-test=edit-allow-once]').textContent()).toBe('批准修改，一次')
    expect(await field(page, 'limit').inputValue()).toBe('5')
    await screenshot(page, 'webui-approval-edit.zh-CN')
    await page.selectOption('[data-test=language]', 'en-US')

    await editor.locator('[data-test=edit-allow-once]').click()
    await page.waitForSelector('[data-test=approvals-empty]')
    const { body } = await call
    expect(body.result.status).toBe('ok')
    expect(body.result.content).toMatch(/^A person changed your arguments/)
    expect(body.result.content).toContain('$.limit: 50 → 5')
    expect(runs).toEqual([{ path: '/var/log/app.log', limit: 5, token: TOKEN }])
    expect(errors).toEqual([])
  })

  it('shows a refused edit inline and keeps the question; fixed, the edit is approved for the session', async () => {
    const { page, card, call, runs } = await asked({ path: '/var/log/app.log', limit: 50 })
    await card.locator('[data-test=edit]').click()
    const editor = card.locator('[data-test=edit-approval]')
    await field(page, 'limit').fill('500')
    await expect.poll(() => editor.locator('[data-test=edit-change]').allInnerTexts()).toEqual(['$.limit: 50 → 500'])
    await editor.locator('[data-test=edit-allow-once]').click()
    const refusal = editor.locator('[data-test=edit-error]')
    await expect.poll(() => refusal.innerText()).toContain('$.limit: expected a number <= 100, got 500')
    expect(await refusal.innerText()).toContain('The edited call was refused; it is still waiting:')
    // Still waiting, the form still open with what was typed; nothing ran.
    expect((await app!.send('approvals.list')).body).toHaveLength(1)
    await page.waitForTimeout(1_300)
    expect(await field(page, 'limit').inputValue()).toBe('500')
    expect(await card.isVisible()).toBe(true)
    expect(runs).toEqual([])
    await screenshot(page, 'webui-approval-edit-refused')
    await page.selectOption('[data-test=language]', 'zh-CN')
    await expect.poll(() => refusal.innerText()).toContain('修改后的调用被拒绝，请求仍在等待：')
    await screenshot(page, 'webui-approval-edit-refused.zh-CN')
    await page.selectOption('[data-test=language]', 'en-US')

    await field(page, 'limit').fill('20')
    await editor.locator('[data-test=edit-allow-session]').click()
    await page.waitForSelector('[data-test=approvals-empty]')
    const { body } = await call
    expect(body.result.content).toContain('$.limit: 50 → 20')
    expect(runs).toEqual([{ path: '/var/log/app.log', limit: 20 }])
    expect((await app!.send('grants.list')).body.map((grant: any) => grant.scope)).toEqual(['session'])
  })

  it('edits as JSON too: text that does not parse is refused on the card, the edited JSON is approved', async () => {
    const { page, card, call, runs } = await asked({ path: '/a', limit: 3, token: TOKEN })
    await card.locator('[data-test=edit]').click()
    const editor = card.locator('[data-test=edit-approval]')
    await editor.locator('[data-test=edit-toggle-raw]').click()
    const text = editor.locator('[data-test=raw-args]')
    expect(JSON.parse(await text.inputValue())).toEqual({ path: '/a', limit: 3, token: '••••' })
    await text.fill('{ "path": "/b", ')
    await editor.locator('[data-test=edit-allow-once]').click()
    await expect.poll(() => editor.locator('[data-test=edit-error]').innerText()).toMatch(/JSON/)
    await text.fill(JSON.stringify({ path: '/b', limit: 3, token: '••••' }))
    await expect.poll(() => editor.locator('[data-test=edit-change]').allInnerTexts()).toEqual(['$.path: "/a" → "/b"'])
    await editor.locator('[data-test=edit-allow-once]').click()
    expect((await call).body.result.content).toContain('3 lines of /b')
    expect(runs).toEqual([{ path: '/b', limit: 3, token: TOKEN }])
  })

  it('refuses a field the tool does not have in "Edit as JSON", before Approve, and shows the call as it will run', async () => {
    const { card, call, runs } = await asked({ path: '/a', limit: 3, token: TOKEN })
    await card.locator('[data-test=edit]').click()
    const editor = card.locator('[data-test=edit-approval]')
    await editor.locator('[data-test=edit-toggle-raw]').click()
    const text = editor.locator('[data-test=raw-args]')
    // As it opens: the model's call, as it would run.
    await expect.poll(async () => JSON.parse(await editor.locator('[data-test=edit-runs-with-args]').innerText())).toEqual({ path: '/a', limit: 3, token: '••••' })
    // The attack: `Limit` passes schemastery, and the call would run with `limit: 3`.
    await text.fill(JSON.stringify({ path: '/a', Limit: 1, token: '••••' }))
    await expect.poll(() => editor.locator('[data-test=edit-not-runnable]').innerText()).toContain('did you mean `limit`?')
    expect(await editor.locator('[data-test=edit-runs-with-args]').count()).toBe(0)
    await editor.locator('[data-test=edit-allow-once]').click()
    await expect.poll(() => editor.locator('[data-test=edit-error]').innerText()).toContain('`Limit` at $.Limit, which is not a field')
    expect(runs).toEqual([])
    // Without `limit`, the call runs with the schema's default: shown before it is approved.
    await text.fill(JSON.stringify({ path: '/b', token: '••••' }))
    await expect.poll(async () => JSON.parse(await editor.locator('[data-test=edit-runs-with-args]').innerText())).toEqual({ path: '/b', limit: 10, token: '••••' })
    expect(await card.innerText()).not.toContain(TOKEN)
    await editor.locator('[data-test=edit-allow-once]').click()
    expect((await call).body.result.content).toContain('10 lines of /b')
    expect(runs).toEqual([{ path: '/b', limit: 10, token: TOKEN }])
  })

  it('closes the editor on Cancel, and the card still approves the call as the model sent it', async () => {
    const { page, card, call, runs } = await asked({ path: '/a', limit: 3 })
    await card.locator('[data-test=edit]').click()
    await field(page, 'limit').fill('4')
    await card.locator('[data-test=edit-cancel]').click()
    expect(await card.locator('[data-test=edit-approval]').count()).toBe(0)
    await card.locator('[data-test=allow-once]').click()
    expect((await call).body.result.content).toBe('3 lines of /a')
    expect(runs).toEqual([{ path: '/a', limit: 3 }])
  })

  it('offers no Edit for a call without arguments to edit', async () => {
    app = await startConsoleApp()
    await app.ctx.plugin({
      name: 'bare-tools',
      inject: ['tools'],
      apply(ctx: Context) {
        ctx.tools.define(defineTool({ name: 'reboot', description: 'Reboot', args: Schema.object({}), traits: { effect: 'exec' }, run: () => 'rebooted' }))
      },
    })
    const call = app.send('call', { tool: 'reboot', args: {}, sessionId: 's' })
    await until(async () => (await app!.send('approvals.list')).body as any[], 'the question')
    page = await context.newPage()
    await page.goto(app.base)
    await page.click('[data-test=tab-approvals]')
    const card = page.locator('[data-test=approval-reboot]')
    await card.waitFor()
    expect(await card.locator('[data-test=edit]').count()).toBe(0)
    await card.locator('[data-test=deny]').click()
    expect((await call).body.result.status).toBe('denied')
  })

  it('says it in Chinese too', async () => {
    const { page, card } = await asked({ path: '/a', limit: 3 })
    await page.selectOption('[data-test=language]', 'zh-CN')
    await expect.poll(() => card.locator('[data-test=edit]').textContent()).toBe('编辑')
    await card.locator('[data-test=edit]').click()
    expect(await card.locator('[data-test=edit-allow-once]').textContent()).toBe('批准修改，一次')
    expect(await card.locator('[data-test=edit-no-changes]').textContent()).toBe('尚未修改。')
    await page.selectOption('[data-test=language]', 'en-US')
    await card.locator('[data-test=deny]').click()
  })
})
