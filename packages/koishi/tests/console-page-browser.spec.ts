import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BrowserContext, chromium, type Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { consoleApp } from './console-app'

/** Debian's chromium package (`apt-get install -y chromium`); never a downloaded browser. */
const CHROMIUM = process.env.DOGU_CHROMIUM ?? '/usr/lib/chromium/chromium'
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

let profile: string
let context: BrowserContext
let t: Awaited<ReturnType<typeof consoleApp>> | undefined
let page: Page | undefined

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`the browser tests need Chromium at ${CHROMIUM}: install it with \`sudo apt-get install -y chromium\`, or point DOGU_CHROMIUM at a Chromium binary`)
  profile = await mkdtemp(join(tmpdir(), 'dogu-chromium-'))
  context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, locale: 'en-US', viewport: { width: 1280, height: 900 }, timeout: 30_000 })
  context.setDefaultTimeout(10_000)
})

afterAll(async () => {
  await context?.close()
  await rm(profile, { recursive: true, force: true })
})

afterEach(async () => {
  await page?.close()
  page = undefined
  await t?.dispose()
  t = undefined
})

/**
 * With DOGU_SCREENSHOTS=1, the pictures of docs/koishi.md are taken from these runs:
 * `DOGU_SCREENSHOTS=1 yarn vitest run packages/koishi/tests/console-page-browser.spec.ts`.
 */
async function screenshot(page: Page, name: string) {
  if (process.env.DOGU_SCREENSHOTS === '1') await page.screenshot({ path: join(__dirname, `../../../docs/images/${name}.png`) })
}

/** The input of a form field, found by the key the form shows. */
const field = (page: Page, key: string) =>
  page.locator('.k-schema-item', { has: page.locator('h3', { hasText: new RegExp(`^${key}$`) }) }).locator('input').first()

/** Koishi's console, opened on the Dogu page. */
async function open() {
  t = await consoleApp()
  page = await context.newPage()
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(error.message))
  await page.goto(`${t.base}/dogu`)
  await page.waitForSelector('.dogu-koishi [data-test=tool-echo]').catch((error) => {
    throw new Error(`the Dogu page did not show its tools (page errors: ${errors.join('; ') || 'none'}): ${error.message}`)
  })
  return page
}

describe('the Dogu page in Koishi\'s console, in Chromium', () => {
  it('picks a tool, fills the generated form, runs it and shows the result', async () => {
    const page = await open()
    await page.click('[data-test=tool-echo]')
    await field(page, 'text').fill('hello')
    await page.fill('[data-test=user-id]', 'guest')
    await page.click('[data-test=run]')
    // The console has no login here: calls carry the page's authority (4), not guest's (0).
    await expect.poll(() => page.textContent('[data-test=result-content]')).toBe('hello (as authority 4)')
    expect(await page.textContent('[data-test=result-status]')).toBe('ok')
    await screenshot(page, 'koishi-console-tools')
  })

  it('approves a question while a chat user waits; the chat question closes', async () => {
    const page = await open()
    const result = t!.app.tools.execute([{ id: 'call-1', name: 'deploy', arguments: { env: 'prod' } }], { session: t!.session('alice') }).then(([r]) => r)
    const question = await t!.outbox.next()
    expect(question.text).toContain('deploy(env=prod)')
    await expect.poll(() => page.textContent('[data-test=approvals-count]')).toBe('1')
    await page.click('[data-test=tab-approvals]')
    const card = page.locator('[data-test=approval-deploy]')
    expect(await card.textContent()).toContain('deploy(env=prod)')
    await screenshot(page, 'koishi-console-approvals')
    await card.locator('[data-test=allow-once]').click()
    await page.waitForSelector('[data-test=approvals-empty]')
    expect((await result).content).toBe('deployed prod')
    // Closed in the chat: alice's "y" is no answer any more, it goes on to the bot.
    expect(await t!.client('alice').receive('y')).toEqual([])
    expect(t!.passed).toEqual(['alice: y'])
  })
})
