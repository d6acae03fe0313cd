// The Dogu page behind @koishijs/plugin-auth's login, in Chromium: a direct link and a reload
// land on the page when logged in (they landed on /profile), a logged-out visitor is sent to
// the login and back, and a login that ends while the page is open says to log in again.
import type { Page } from 'playwright-core'
import { afterEach, describe, expect, it } from 'vitest'
import { chromiumForFile } from '../../../test-support/chromium'
import { ADMIN_PASSWORD, consoleApp, logIn } from './console-app'

const browser = chromiumForFile()
let t: Awaited<ReturnType<typeof consoleApp>> | undefined
let page: Page | undefined

afterEach(async () => {
  await page?.close()
  page = undefined
  await t?.dispose()
  t = undefined
})

/** A console with plugin-auth, and a page on it whose browser holds no login. */
async function open() {
  t = await consoleApp({ auth: true })
  page = await browser.context.newPage()
  await page.goto(`${t.base}/login`)
  await page.evaluate(() => localStorage.clear())
  return page
}

/** plugin-auth has logged in with the token it kept: it greets the user once the login is done (`欢迎回来`). */
const greeted = (page: Page) => page.waitForSelector('.el-message:has-text("欢迎回来")')

/** The script of a console entry: Dogu's page (`dogu-console`) or plugin-auth's. */
function entryScript(which: 'dogu' | 'auth'): string {
  const [key] = Object.entries(t!.app.console.entries).find(([, entry]) => which === 'dogu'
    ? entry.ctx.name === 'dogu-console'
    : typeof entry.files === 'object' && !Array.isArray(entry.files) && String(entry.files.prod).includes('plugin-auth'))!
  return `${t!.base}/@plugin-${key}/index.js`
}

/**
 * Holds back one entry's script until `until` resolves: the orders a slow network gives the
 * console's extensions, in which a load landed on /profile or showed a page without tools.
 * - `dogu` until plugin-auth has logged in (the console's socket brought the user);
 * - `auth` until the Dogu page shows (so plugin-auth's guard and login come after it).
 */
function hold(page: Page, which: 'dogu' | 'auth') {
  const script = entryScript(which)
  let loggedIn!: () => void
  const login = new Promise<void>((resolve) => { loggedIn = resolve })
  page.on('websocket', (socket) => socket.on('framereceived', ({ payload }) => {
    if (/"key":"user","value":\{/.test(String(payload))) loggedIn()
  }))
  let release!: () => void
  const released = new Promise<void>((resolve) => { release = resolve })
  const handler = async (route: Parameters<Parameters<Page['route']>[1]>[0]) => {
    await (which === 'dogu' ? login : page.waitForSelector('.dogu-koishi'))
    // A held request Playwright ended meanwhile (its page went on to the next load) cannot be
    // continued: that one race, and nothing else, is not an error here.
    await route.continue().catch((error: Error) => {
      if (!/Route is already handled/.test(error.message)) throw error
    })
    release()
  }
  void page.route(script, handler)
  return { released, stop: () => page.unroute(script, handler) }
}

/** The Dogu page is open and showing its tools. */
const onDogu = (page: Page) => page.waitForSelector('.dogu-koishi [data-test=tool-echo]')

describe('the Dogu page behind plugin-auth\'s login, in Chromium', () => {
  it('opens by a direct link and stays through reloads while logged in', async () => {
    const page = await open()
    await logIn(page, t!.base)
    // A direct link, then reloads: as it comes, with Dogu's script after the login, and with plugin-auth's after the page.
    for (const [load, held] of ['link', 'dogu', 'auth', 'reload'].entries()) {
      const holding = held === 'dogu' || held === 'auth' ? hold(page, held) : undefined
      if (load === 0) await page.goto(`${t!.base}/dogu`)
      else await page.reload()
      // After the login that follows every load: plugin-auth's move to /profile is what went wrong.
      await holding?.released
      await greeted(page)
      await onDogu(page)
      expect(new URL(page.url()).pathname, `load ${load} (${held})`).toBe('/dogu')
      await holding?.stop()
    }
    // The profile is still there to be opened on purpose, from the activity bar.
    await page.click('.activity-button[href="/profile"]')
    await page.waitForURL((url) => url.pathname === '/profile')
  })

  it('sends a logged-out visitor to the login, hides the page from the menu, and comes back to it after the login', async () => {
    const page = await open()
    await page.goto(`${t!.base}/dogu`)
    await page.waitForURL((url) => url.pathname === '/login')
    await page.waitForSelector('input[placeholder=密码]')
    expect(await page.locator('.dogu-koishi').count()).toBe(0)
    expect(await page.locator('.activity-button[href="/dogu"]').count()).toBe(0)
    await page.fill('input[placeholder=用户名]', 'admin')
    await page.fill('input[placeholder=密码]', ADMIN_PASSWORD)
    await page.locator('.login-form button', { hasText: '登录' }).click()
    await onDogu(page)
    expect(new URL(page.url()).pathname).toBe('/dogu')
  })

  it('says to log in, with no tools shown, when the page comes before plugin-auth\'s guard; its login comes back to the page', async () => {
    const page = await open()
    const holding = hold(page, 'auth')
    await page.goto(`${t!.base}/dogu`)
    await holding.released
    await page.waitForSelector('.dogu-koishi [data-test=login-out]')
    expect(await page.textContent('.dogu-koishi [data-test=login-out]')).toBe('请先登录控制台，再使用 Dogu 页面。登录')
    expect(await page.locator('.dogu-koishi [data-test^=tool-]').count()).toBe(0)
    await holding.stop()
    await page.click('.dogu-koishi [data-test=login]')
    await page.waitForURL((url) => url.pathname === '/login')
    await page.fill('input[placeholder=用户名]', 'admin')
    await page.fill('input[placeholder=密码]', ADMIN_PASSWORD)
    await page.locator('.login-form button', { hasText: '登录' }).click()
    await onDogu(page)
    expect(new URL(page.url()).pathname).toBe('/dogu')
  })

  it('says to log in when the console refuses the page (the login expired), and offers the login', async () => {
    const page = await open()
    await logIn(page, t!.base)
    await page.goto(`${t!.base}/dogu`)
    await onDogu(page)
    // plugin-auth refuses a client whose login has expired: the console answers `unauthorized`.
    for (const client of Object.values(t!.app.console.clients)) if (client.auth) client.auth.expiredAt = 0
    await expect.poll(() => page.textContent('.dogu-koishi [data-test=console-error]')).toBe('错误：请先登录控制台：此页面需要登录，且权限等级不低于页面的要求。登录')
    expect(await page.textContent('.dogu-koishi')).not.toContain('unauthorized')
    await page.click('.dogu-koishi [data-test=login]')
    await page.waitForURL((url) => url.pathname === '/login')
  })
})
