import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { BrowserContext } from 'playwright-core'
import { CHROMIUM, openChromium } from '../../../test-support/chromium'
import { DIST } from '../src/static-files'

export { CHROMIUM }

/**
 * A fresh headless Chromium profile (`openChromium`). Missing Chromium or an unbuilt page
 * fail with what to do: these tests never skip.
 */
export async function openBrowser(options: { locale?: string } = {}): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  if (!existsSync(join(DIST, 'index.html'))) {
    throw new Error(`the console page is not built (${DIST} has no index.html): run \`node scripts/build.mjs @dogu/webui\` or \`yarn build\``)
  }
  return openChromium(options)
}
