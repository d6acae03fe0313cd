// Issue 34 in Koishi's console, seen by a person: an imported MCP server behind OAuth shows
// "needs authorization" in the MCP servers view of the Dogu page; "Authorize" goes to the
// authorization server, which sends the browser back to /dogu/mcp/oauth/callback on Koishi's
// own server, and the server connects. Deployed as a Koishi user would: the console, Dogu's
// callback route (as the Dogu plugin loads it) and McpClientPlugin without a redirect URL, so
// the default one (Koishi's server address and the callback path) is the one in use.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ToolSource } from '@dogu/core'
import type { Page } from 'playwright-core'
import { afterEach, describe, expect, it } from 'vitest'
import { McpClientPlugin } from '../../mcp/src'
import { type OAuthMcpServer, startOAuthMcpServer } from '../../mcp/tests/fixtures/oauth-mcp-server'
import { chromiumForFile } from '../../../test-support/chromium'
import { mcpOAuthCallback, OAUTH_CALLBACK_PATH } from '../src/mcp-oauth-callback'
import { consoleApp } from './console-app'

const browser = chromiumForFile()
let t: Awaited<ReturnType<typeof consoleApp>> | undefined
let fixture: OAuthMcpServer | undefined
let dir: string | undefined
let page: Page | undefined

afterEach(async () => {
  await page?.close()
  // The app before the fixture: its connection to the MCP server closes while the server is there.
  await t?.dispose()
  await fixture?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
  page = t = fixture = dir = undefined
})

/**
 * With DOGU_SCREENSHOTS=1, the pictures of the view in docs/ (Chinese, and `.en-US`) are taken from this run:
 * `DOGU_SCREENSHOTS=1 yarn vitest run packages/koishi/tests/console-mcp-browser.spec.ts`.
 */
async function screenshot(page: Page, name: string) {
  if (process.env.DOGU_SCREENSHOTS === '1') await page.screenshot({ path: join(__dirname, `../../../docs/images/${name}.png`) })
}

/** Koishi's console with the callback route, then the fixture imported as `docs`, behind OAuth, with no redirect URL given. */
async function deploy() {
  fixture = await startOAuthMcpServer()
  dir = await mkdtemp(join(tmpdir(), 'dogu-koishi-console-mcp-'))
  t = await consoleApp()
  t.app.plugin({ name: 'dogu-mcp-oauth-callback', inject: ['tools', 'server'], apply: mcpOAuthCallback })
  // Until someone authorizes it, the client says so on Koishi's log.
  t.guard.expect('[dogu-mcp] MCP server "docs" needs authorization')
  // No redirectUrl: the default is Koishi's server (listening by now, consoleApp waits for it) + the callback path.
  t.app.plugin(McpClientPlugin as any, {
    servers: { docs: { url: fixture.url, auth: 'oauth' } },
    oauth: { storePath: join(dir, 'mcp-oauth.json') },
  })
  await t.settle()
  const source = () => t!.app.tools.sources().find((entry) => entry.name === 'docs') as ToolSource
  return { source }
}

const row = (page: Page, name: string) => page.locator(`.dogu-koishi [data-test=mcp-server][data-name="${name}"]`)

/** The Dogu page of Koishi's console, on its MCP servers tab. */
async function openMcpView(page: Page) {
  await page.goto(`${t!.base}/dogu`)
  await page.click('.dogu-koishi [data-test=tab-mcp]')
}

describe('the MCP servers view in Koishi\'s console, in Chromium', () => {
  it('shows the server needing authorization; Authorize goes through the authorization server to Koishi\'s callback, and it connects', async () => {
    const { source } = await deploy()
    page = await browser.context.newPage()
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    await openMcpView(page)
    const docs = row(page, 'docs')
    // Koishi's console is in Chinese unless its locale setting says otherwise; the page follows it.
    await expect.poll(() => docs.locator('[data-test=mcp-status]').textContent()).toBe('需要授权')
    expect(await page.textContent('.dogu-koishi [data-test=tab-mcp]')).toBe('MCP 服务器')
    expect(await docs.locator('[data-test=mcp-tools]').textContent()).toBe('0')
    expect(await docs.locator('[data-test=authorize]').textContent()).toBe('授权')
    expect(t!.app.tools.get('docs_whoami')).toBeUndefined()
    await screenshot(page, 'koishi-console-mcp-servers')
    // The console set to English (its own language setting): the same view.
    const english = await browser.context.newPage()
    try {
      await english.addInitScript(() => localStorage.setItem('koishi.console.config', JSON.stringify({ ...JSON.parse(localStorage.getItem('koishi.console.config') ?? '{}'), locale: 'en-US' })))
      await openMcpView(english)
      const docsInEnglish = row(english, 'docs')
      await expect.poll(() => docsInEnglish.locator('[data-test=mcp-status]').textContent()).toBe('needs authorization')
      expect(await docsInEnglish.locator('[data-test=authorize]').textContent()).toBe('Authorize')
      await screenshot(english, 'koishi-console-mcp-servers.en-US')
    } finally {
      // The setting is the origin's: back to Chinese for the page this test goes on with.
      await english.evaluate(() => localStorage.setItem('koishi.console.config', JSON.stringify({ ...JSON.parse(localStorage.getItem('koishi.console.config') ?? '{}'), locale: 'zh-CN' })))
      await english.close()
    }

    // The fixture's authorization page sends the browser straight back with code and state,
    // to the default redirect: Koishi's own server, which answers with its small page.
    await page.click('.dogu-koishi [data-test=authorize]')
    await page.waitForURL((url) => url.pathname === OAUTH_CALLBACK_PATH)
    expect(new URL(page.url()).origin).toBe(t!.base)
    // The browser asks for English (en-US): the route's page answers in it.
    expect(await page.textContent('body > p')).toBe('Authorized docs. You can close this page.')

    // Back in the console: connected, with every tool the fixture serves.
    await openMcpView(page)
    await expect.poll(() => docs.locator('[data-test=mcp-status]').textContent()).toBe('已连接')
    expect(source().status).toBe('connected')
    expect(source().tools).toEqual(expect.arrayContaining(['docs_whoami', 'docs_admin_op']))
    expect(Number(await docs.locator('[data-test=mcp-tools]').textContent())).toBe(source().tools.length)
    expect(await docs.locator('[data-test=mcp-tools]').getAttribute('title')).toBe(source().tools.join(', '))
    expect(await docs.locator('[data-test=authorize]').count()).toBe(0)
    expect(t!.app.tools.get('docs_whoami')).toBeDefined()
    expect(fixture!.counts.codeExchanges).toBe(1)
    // The tokens stay on the server side: none reaches the page.
    const html = await page.content()
    expect(fixture!.issued.length).toBeGreaterThan(0)
    for (const token of fixture!.issued) expect(html).not.toContain(token)
    expect(errors).toEqual([])
  })
})
