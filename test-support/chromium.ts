// A headless Chromium for the browser tests of both consoles: Debian's package, never a
// downloaded browser, in a fresh profile that `close` removes.
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BrowserContext, chromium } from 'playwright-core'
import { afterAll, beforeAll } from 'vitest'

/** Debian's chromium package (`apt-get install -y chromium`), or `DOGU_CHROMIUM`. */
export const CHROMIUM = process.env.DOGU_CHROMIUM ?? '/usr/lib/chromium/chromium'

const FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
]

/** A fresh headless Chromium profile; a missing Chromium fails with what to do: these tests never skip. */
export async function openChromium(options: { locale?: string } = {}): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`the browser tests need Chromium at ${CHROMIUM}: install it with \`sudo apt-get install -y chromium\` (Debian/Ubuntu), or point DOGU_CHROMIUM at a Chromium binary`)
  }
  const profile = await mkdtemp(join(tmpdir(), 'dogu-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    locale: options.locale ?? 'en-US',
    viewport: { width: 1280, height: 900 },
    timeout: 30_000,
  })
  context.setDefaultTimeout(10_000)
  return {
    context,
    async close() {
      await context.close()
      await rm(profile, { recursive: true, force: true })
    },
  }
}

/**
 * One Chromium for the calling test file: opened before its tests, closed after them.
 * `browser.context` is the profile while they run.
 */
export function chromiumForFile(options: { locale?: string } = {}): { readonly context: BrowserContext } {
  let opened: Awaited<ReturnType<typeof openChromium>> | undefined
  beforeAll(async () => {
    opened = await openChromium(options)
  })
  afterAll(async () => {
    await opened?.close()
  })
  return {
    get context() {
      if (!opened) throw new Error('Chromium is open only while the file\'s tests run')
      return opened.context
    },
  }
}
