import { defineTool, type ToolPreview } from '@dogu/core'
import type { Context } from 'cordis'
import type { BrowserContext, Page } from 'playwright-core'
import Schema from 'schemastery'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { openBrowser } from './browser'
import { startConsoleApp, until } from './console-app'

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

/** A diff of `pairs` changed lines (each one removed, one added) under file headers and one hunk header. */
function diffOf(pairs: number) {
  const body = Array.from({ length: pairs }, (_, i) => [`-old line ${i + 1}`, `+new line ${i + 1}`]).flat()
  return ['--- a/notes.txt', '+++ b/notes.txt', `@@ -1,${pairs + 1} +1,${pairs + 1} @@`, ' unchanged first line', ...body].join('\n')
}

/**
 * The console with one more tool, `change` (write: asks first), whose preview is its
 * arguments; a call to it is left waiting on the Approvals view.
 */
async function asked(preview: ToolPreview) {
  app = await startConsoleApp()
  await app.ctx.plugin({
    name: 'preview-tools',
    inject: ['tools'],
    apply(ctx: Context) {
      ctx.tools.define(defineTool({
        name: 'change',
        description: 'Change something, saying what first',
        args: Schema.object({ text: Schema.string(), diff: Schema.string(), url: Schema.string(), command: Schema.string() }),
        traits: { effect: 'write' },
        preview: (args) => args as ToolPreview,
        run: () => 'changed',
      }))
    },
  })
  const call = app.send('call', { tool: 'change', args: preview, sessionId: 'webui' })
  const [question] = await until(async () => {
    const list = (await app!.send('approvals.list')).body as any[]
    return list.length > 0 ? list : undefined
  }, 'the question')
  page = await context.newPage()
  await page.goto(app.base)
  await page.click('[data-test=tab-approvals]')
  const card = page.locator('[data-test=approval-change]')
  await card.waitFor()
  /** Denies the question from the card and waits for the call to end. */
  const deny = async () => {
    await card.locator('[data-test=deny]').click()
    expect((await call).body.result.status).toBe('denied')
  }
  return { page, card, question, deny }
}

describe('an approval card shows what the call would do', () => {
  it('passes the preview through approvals.list', async () => {
    const preview = { diff: diffOf(2), command: 'rm -rf build', url: 'https://example.com/a?b=1', text: 'two\nlines' }
    const { question, deny } = await asked(preview)
    expect(question.preview).toEqual(preview)
    await deny()
  })

  it('renders a diff with added, removed and header lines, folded past 20 lines, and expands and collapses it', async () => {
    const { page, card, deny } = await asked({ diff: diffOf(15) })
    const diff = card.locator('[data-test=preview-diff]')
    // 4 header/context lines and 30 changed: the first 20 are shown.
    expect(await diff.locator('> span').count()).toBe(20)
    expect(await diff.locator('.diff-file').allTextContents()).toEqual(['--- a/notes.txt\n', '+++ b/notes.txt\n'])
    expect(await diff.locator('.diff-hunk').textContent()).toBe('@@ -1,16 +1,16 @@\n')
    expect(await diff.locator('.diff-removed').first().textContent()).toBe('-old line 1\n')
    expect(await diff.locator('.diff-added').first().textContent()).toBe('+new line 1\n')
    // Green for added, red for removed, grey for the hunk header.
    const color = (selector: string) => diff.locator(selector).first().evaluate((element) => getComputedStyle(element).color)
    expect(await color('.diff-added')).toBe('rgb(17, 99, 41)')
    expect(await color('.diff-removed')).toBe('rgb(130, 7, 30)')
    expect(await color('.diff-hunk')).toBe('rgb(101, 109, 118)')
    expect(await diff.innerText()).not.toContain('new line 15')

    const expander = card.locator('[data-test=preview-diff-expand]')
    expect(await expander.textContent()).toBe('Show all 34 lines')
    await expander.click()
    expect(await diff.locator('> span').count()).toBe(34)
    await expect.poll(() => diff.locator('.diff-added').last().textContent()).toBe('+new line 15\n')
    expect(await diff.locator('.diff-added').last().isVisible()).toBe(true)
    expect(await expander.textContent()).toBe('Show less')
    // The list refreshes every second; what was expanded stays so.
    await page.waitForTimeout(1_500)
    expect(await diff.locator('> span').count()).toBe(34)
    await expander.click()
    expect(await diff.locator('> span').count()).toBe(20)
    expect(await expander.textContent()).toBe('Show all 34 lines')
    await deny()
  })

  it('says it in Chinese too', async () => {
    const { page, card, deny } = await asked({ diff: diffOf(15), command: 'make deploy' })
    await page.selectOption('[data-test=language]', 'zh-CN')
    await expect.poll(() => card.locator('[data-test=preview-diff-expand]').textContent()).toBe('显示全部 34 行')
    expect(await card.locator('.preview-label').allTextContents()).toEqual(['命令', '改动'])
    await card.locator('[data-test=preview-diff-expand]').click()
    expect(await card.locator('[data-test=preview-diff-expand]').textContent()).toBe('收起')
    await page.selectOption('[data-test=language]', 'en-US')
    await deny()
  })

  it('shows the whole command and URL, wrapped, and a short text with its line breaks and no expander', async () => {
    const command = `docker run --rm ${Array.from({ length: 60 }, (_, i) => `-e VAR_${i}=value-${i}`).join(' ')} alpine sh -c 'echo the-very-end'`
    const url = `https://example.com/search?q=${'x'.repeat(400)}&tail=last-part`
    const { card, deny } = await asked({ command, url, text: 'in /work/app\nsandboxed, no network' })
    const shown = card.locator('[data-test=preview-command]')
    expect(await shown.textContent()).toBe(command)
    // Wrapped inside the card, not cut or scrolled: its tail is on screen.
    expect(await shown.evaluate((element) => element.scrollWidth <= element.clientWidth)).toBe(true)
    const tail = await shown.evaluate((element) => {
      const range = document.createRange()
      range.setStart(element.firstChild!, element.textContent!.length - 5)
      range.setEnd(element.firstChild!, element.textContent!.length)
      const box = range.getBoundingClientRect()
      const card = element.getBoundingClientRect()
      return { right: box.right, width: box.width, cardRight: card.right }
    })
    expect(tail.width).toBeGreaterThan(0)
    expect(tail.right).toBeLessThanOrEqual(tail.cardRight)
    expect(await card.locator('[data-test=preview-url]').textContent()).toBe(url)
    expect(await card.locator('[data-test=preview-url]').evaluate((element) => element.scrollWidth <= element.clientWidth)).toBe(true)
    expect(await card.locator('[data-test=preview-text]').innerText()).toBe('in /work/app\nsandboxed, no network')
    expect(await card.locator('[data-test=preview-text-expand]').count()).toBe(0)
    expect(await card.locator('[data-test=preview-diff]').count()).toBe(0)
    await deny()
  })

  it('folds a long text the same way', async () => {
    const text = Array.from({ length: 25 }, (_, i) => `step ${i + 1}`).join('\n')
    const { card, deny } = await asked({ text })
    const shown = card.locator('[data-test=preview-text]')
    expect(await shown.innerText()).toBe(text.split('\n').slice(0, 20).join('\n'))
    await card.locator('[data-test=preview-text-expand]', { hasText: 'Show all 25 lines' }).click()
    expect(await shown.innerText()).toBe(text)
    await card.locator('[data-test=preview-text-expand]', { hasText: 'Show less' }).click()
    expect(await shown.innerText()).not.toContain('step 21')
    await deny()
  })

  it('shows markup in a diff or text as text', async () => {
    const hostile = '<img src=x onerror="window.__pwned=1"><b>bold</b>'
    const { page, card, deny } = await asked({ diff: `--- a/x\n+++ b/x\n@@ -1 +1 @@\n-${hostile}\n+${hostile}`, text: hostile, command: hostile })
    expect(await card.locator('[data-test=preview-diff] .diff-added').textContent()).toBe(`+${hostile}\n`)
    expect(await card.locator('[data-test=preview-text]').textContent()).toBe(hostile)
    expect(await card.locator('[data-test=preview-command]').textContent()).toBe(hostile)
    expect(await card.locator('img, b').count()).toBe(0)
    await page.waitForTimeout(200)
    expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined()
    await deny()
  })
})
