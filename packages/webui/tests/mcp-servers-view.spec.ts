// Issue 34, the authorization step seen by a person: an imported MCP server behind OAuth shows
// "needs authorization" in the console's MCP servers view; "Authorize" goes to the
// authorization server, which sends the browser back to the console's own callback page; the
// page completes the authorization as the logged-in operator and the server connects. Deployed
// as a user would: Dogu, the standalone console, and McpClientPlugin whose redirect URL is the
// console's callback.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { McpClientPlugin } from '../../mcp/src'
import { type OAuthMcpServer, startOAuthMcpServer } from '../../mcp/tests/fixtures/oauth-mcp-server'
import { OAUTH_CALLBACK_PATH } from '../src/webui-service'
import { openBrowser } from './browser'
import { startConsoleApp } from './console-app'

let browser: Awaited<ReturnType<typeof openBrowser>>
let context: BrowserContext
let app: Awaited<ReturnType<typeof startConsoleApp>> | undefined
let server: OAuthMcpServer | undefined
let dir: string | undefined
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
  await app?.dispose()
  await server?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
  page = app = server = dir = undefined
})

/**
 * With DOGU_SCREENSHOTS=1, docs/mcp.md's pictures of the view (English, and `.zh-CN`) are taken from this run:
 * `DOGU_SCREENSHOTS=1 yarn vitest run packages/webui/tests/mcp-servers-view.spec.ts`.
 */
async function screenshot(page: Page, name: string) {
  if (process.env.DOGU_SCREENSHOTS === '1') await page.screenshot({ path: join(import.meta.dirname, `../../../docs/images/${name}.png`) })
}

const TOKEN = 'tok-mcp-view-4b7c1e'

/** The console with its token, then the OAuth server imported with the console's callback as redirect URL. */
async function deploy() {
  server = await startOAuthMcpServer()
  dir = await mkdtemp(join(tmpdir(), 'dogu-webui-mcp-'))
  app = await startConsoleApp({ token: TOKEN })
  // Until someone authorizes it, the client plugin says so in the log, once.
  guardLogs(app.ctx).expect(/MCP server "tracker" needs authorization/)
  const redirectUrl = new URL(OAUTH_CALLBACK_PATH, app.base).href
  await app.ctx.plugin(McpClientPlugin, McpClientPlugin.Config({
    servers: { tracker: { url: server.url, auth: 'oauth' } },
    oauth: { storePath: join(dir, 'mcp-oauth.json'), redirectUrl },
  }))
  const source = () => app!.ctx.tools.sources().find((entry) => entry.name === 'tracker')!
  return { redirectUrl, source }
}

const row = (page: Page, name: string) => page.locator(`[data-test=mcp-server][data-name="${name}"]`)

describe('the MCP servers view, in Chromium', () => {
  it('shows the server needing authorization; Authorize goes through the authorization server and back, and it connects', async () => {
    const { source } = await deploy()
    page = await context.newPage()
    await page.goto(`${app!.base}/#token=${TOKEN}`)
    await page.click('[data-test=tab-mcp]')
    const tracker = row(page, 'tracker')
    await expect.poll(() => tracker.locator('[data-test=mcp-status]').textContent()).toBe('needs authorization')
    expect(await tracker.locator('[data-test=mcp-tools]').textContent()).toBe('0')
    await screenshot(page, 'mcp-servers-view-needs-authorization')
    // The page's language switch: the same view in Chinese.
    await page.selectOption('[data-test=language]', 'zh-CN')
    await expect.poll(() => tracker.locator('[data-test=mcp-status]').textContent()).toBe('需要授权')
    expect(await tracker.locator('[data-test=authorize]').textContent()).toBe('授权')
    await screenshot(page, 'mcp-servers-view-needs-authorization.zh-CN')
    await page.selectOption('[data-test=language]', 'en-US')

    // The fixture's authorization page sends the browser straight back with code and state.
    await page.click('[data-test=authorize]')
    await expect.poll(() => page!.getAttribute('[data-test=oauth-outcome]', 'data-phase')).toBe('authorized')
    expect(await page.textContent('[data-test=oauth-outcome]')).toBe('Authorized tracker')
    // The code is gone from the address bar (and the history): the console, on this view.
    expect(page.url()).toBe(`${app!.base}/#mcp`)
    await expect.poll(() => tracker.locator('[data-test=mcp-status]').textContent()).toBe('connected')
    const count = await tracker.locator('[data-test=mcp-tools]').textContent()
    expect(Number(count)).toBe(source().tools.length)
    expect(source().tools).toEqual(expect.arrayContaining(['tracker_whoami', 'tracker_admin_op']))
    expect(await tracker.locator('[data-test=mcp-tools]').getAttribute('title')).toBe(source().tools.join(', '))
    expect(await tracker.locator('[data-test=authorize]').count()).toBe(0)
    expect(await tracker.locator('[data-test=mcp-last-error]').textContent()).toBe('')
    expect(server!.counts.codeExchanges).toBe(1)
    await screenshot(page, 'mcp-servers-view')
    await page.selectOption('[data-test=language]', 'zh-CN')
    await expect.poll(() => tracker.locator('[data-test=mcp-status]').textContent()).toBe('已连接')
    await screenshot(page, 'mcp-servers-view.zh-CN')
    await page.selectOption('[data-test=language]', 'en-US')
  })

  it('a callback with a forged state shows the error and authorizes nothing', async () => {
    const { source } = await deploy()
    page = await context.newPage()
    await page.goto(`${app!.base}/#token=${TOKEN}`)
    await page.click('[data-test=tab-mcp]')
    await expect.poll(() => row(page!, 'tracker').locator('[data-test=mcp-status]').getAttribute('data-status')).toBe('needs-authorization')
    // An authorization under way, as if the operator had pressed Authorize: the forged state is not its.
    await app!.send('sources.authorize', { kind: 'mcp', name: 'tracker' }, { 'x-dogu-token': TOKEN })

    await page.goto(`${app!.base}/mcp/oauth/callback?code=stolen-or-made-up&state=forged`)
    await expect.poll(() => page!.getAttribute('[data-test=oauth-outcome]', 'data-phase')).toBe('failed')
    expect(await page.textContent('[data-test=oauth-outcome]')).toMatch(/^The authorization did not complete: no authorization with this state is under way/)
    expect(page.url()).toBe(`${app!.base}/#mcp`)
    expect(server!.counts.codeExchanges).toBe(0)
    expect(source().status).toBe('needs-authorization')
    expect(await row(page, 'tracker').locator('[data-test=mcp-status]').textContent()).toBe('needs authorization')

    // In Chinese, the same state has its own words.
    await page.selectOption('[data-test=language]', 'zh-CN')
    await expect.poll(() => row(page!, 'tracker').locator('[data-test=mcp-status]').textContent()).toBe('需要授权')
    expect(await page.textContent('[data-test=tab-mcp]')).toBe('MCP 服务器')
    expect(await row(page, 'tracker').locator('[data-test=authorize]').textContent()).toBe('授权')
  })

  it('an error from the authorization server is shown, and nothing is sent to complete', async () => {
    const { source } = await deploy()
    page = await context.newPage()
    await page.goto(`${app!.base}/#token=${TOKEN}`)
    const completes: string[] = []
    page.on('request', (request) => { if (request.url().includes('/api/sources.complete')) completes.push(request.url()) })
    await page.goto(`${app!.base}/mcp/oauth/callback?error=access_denied&error_description=${encodeURIComponent('The user denied access')}&state=whatever`)
    await expect.poll(() => page!.getAttribute('[data-test=oauth-outcome]', 'data-phase')).toBe('refused')
    expect(await page.textContent('[data-test=oauth-outcome]')).toBe('The authorization server refused: access_denied: The user denied access')
    expect(page.url()).toBe(`${app!.base}/#mcp`)
    // The view still lists the server (the page's API calls work from the callback page).
    await expect.poll(() => row(page!, 'tracker').locator('[data-test=mcp-status]').textContent()).toBe('needs authorization')
    expect(completes).toEqual([])
    expect(source().status).toBe('needs-authorization')
  })
})
