// `yarn screenshots`: a screenshot of each view of the console into docs/images/, for
// docs/webui.md, in English (`webui-<view>.png`) and in Chinese (`webui-<view>.zh-CN.png`),
// the form listing its violations among them (after an edit: an untouched form lists none),
// the quotas of a user who used some, and an approval card with its diff preview expanded
// (`webui-approval-preview`). The audit log, the edit form and the MCP servers view are taken
// by their browser tests with DOGU_SCREENSHOTS=1 (docs/webui.md says which). Runs the built packages (`yarn build` first)
// in a throwaway app with the playground's plugins, the file tools and a few calls made, then
// drives Debian's Chromium. The Chinese shots need a CJK font (Debian: fonts-noto-cjk).
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import Dogu from '@dogu/cordis'
import { defineTool } from '@dogu/core'
import { createFsTools } from '@dogu/fs'
import WebUI from '@dogu/webui'
import * as Lookup from '@dogu-external/lookup'
import * as Notes from '@dogu-external/notes'
import { Context } from 'cordis'
import { chromium } from 'playwright-core'
import Schema from 'schemastery'

const root = resolve(import.meta.dirname, '../../..')
const out = join(root, 'docs/images')
const executablePath = process.env.DOGU_CHROMIUM ?? '/usr/lib/chromium/chromium'
if (!existsSync(executablePath)) {
  console.error(`no Chromium at ${executablePath}: install it with \`sudo apt-get install -y chromium\`, or set DOGU_CHROMIUM`)
  process.exit(1)
}
// Without a CJK font Chromium draws Chinese as empty boxes, and the shots would show them.
const cjk = spawnSync('fc-list', [':lang=zh', 'family'], { encoding: 'utf8' })
if (cjk.error || !cjk.stdout.trim()) {
  console.error(cjk.error
    ? `cannot list the installed fonts (${cjk.error.message}): the Chinese screenshots need fontconfig's fc-list and a CJK font; on Debian/Ubuntu: sudo apt-get install -y fontconfig fonts-noto-cjk`
    : 'no CJK font is installed, so the Chinese screenshots would show boxes instead of characters: on Debian/Ubuntu, sudo apt-get install -y fonts-noto-cjk')
  process.exit(1)
}

const dir = await mkdtemp(join(tmpdir(), 'dogu-screenshots-'))
const workspace = join(dir, 'work')
const ctx = new Context()
let context
try {
  await ctx.plugin(Dogu, {
    audit: { storePath: join(dir, 'audit.jsonl') }, permissions: { storePath: join(dir, 'permissions.json') },
    background: { storePath: join(dir, 'background.json') },
    tools: { quotas: [
      { name: 'notes per user', tools: 'notes', per: 'user', max: 5, window: '1h' },
      { name: 'everything per session', per: 'session', max: 50, window: '1d' },
    ] },
  })
  await ctx.plugin(Lookup, {})
  await ctx.plugin(Notes, {})
  await mkdir(workspace, { recursive: true })
  const fs = createFsTools({ workspace })
  await writeFile(join(workspace, 'README.md'), '# Demo\n\nHello.\n')
  await ctx.plugin(WebUI, { port: 0 })
  await ctx.plugin({
    name: 'demo',
    inject: ['tools', 'webui'],
    apply(ctx) {
      ctx.tools.define(fs.tools.read)
      ctx.tools.define(fs.tools.edit)
      ctx.webui.addChangeLog(fs.changes)
      ctx.tools.define(defineTool({
        name: 'deploy',
        description: 'Deploy a build to an environment',
        args: Schema.object({
          env: Schema.union(['staging', 'prod']).required().description({ 'zh-CN': '部署环境', 'en-US': 'Where to deploy' }),
          version: Schema.string().default('latest').description({ 'zh-CN': '版本号', 'en-US': 'Build version' }),
          replicas: Schema.natural().min(1).max(10).default(2).description({ 'zh-CN': '副本数', 'en-US': 'Replicas' }),
          flags: Schema.array(String).description({ 'zh-CN': '附加参数', 'en-US': 'Extra flags' }),
          labels: Schema.dict(String).description({ 'zh-CN': '标签', 'en-US': 'Labels' }),
        }),
        traits: { effect: 'exec' },
        // What a person approving it is shown: the command it runs.
        preview: ({ env, version }) => ({ command: `kubectl --context ${env} set image deployment/api api=registry.example.com/api:${version} && kubectl --context ${env} rollout status deployment/api --timeout=120s` }),
        run: ({ env, version }) => ({ text: `deployed ${version} to ${env}`, data: { env, version } }),
      }))
      // A write whose approval card shows the diff it would apply (longer than the card shows folded).
      ctx.tools.define(defineTool({
        name: 'set_config',
        description: 'Update the service configuration',
        args: Schema.object({ replicas: Schema.natural().required(), region: Schema.string().required() }),
        traits: { effect: 'write' },
        preview: ({ replicas, region }) => ({
          text: `config/service.yml in the workspace\nreloads the service after writing`,
          diff: configDiff(replicas, region),
        }),
        run: () => 'updated',
      }))
      ctx.tools.define(defineTool({
        name: 'reindex',
        description: 'Rebuild the search index (slow: continues in the background)',
        args: Schema.object({}),
        traits: { effect: 'read', timeout: 1 },
        run: (_args, call) => new Promise((_resolve, reject) => call.signal.addEventListener('abort', () => reject(call.signal.reason), { once: true })),
      }))
    },
  })
  const webui = ctx.get('webui')
  const api = (method, payload = {}) => webui.api.handle(method, payload)

  // Something to see in each view.
  await api('modes.set', { sessionId: 'group-42', mode: 'acceptEdits' })
  await api('call', { tool: 'edit', args: { path: 'README.md', oldText: 'Hello.', newText: 'Hello, Dogu!' }, sessionId: 'group-42', userId: 'alice' })
  await api('call', { tool: 'reindex', args: {}, sessionId: 'group-42' })
  const granted = api('call', { tool: 'notes', args: { action: 'add', text: 'buy milk' }, sessionId: 'dm-alice', userId: 'alice' })
  await until(() => webui.asker.list().length)
  await api('approvals.answer', { id: webui.asker.list()[0].id, decision: 'allow', scope: 'session' })
  await granted
  // Used twice by alice: the Quotas view shows what is left.
  await api('call', { tool: 'notes', args: { action: 'list' }, sessionId: 'dm-alice', userId: 'alice' })
  // Left waiting for the approvals view.
  void api('call', { tool: 'deploy', args: { env: 'prod', version: '1.4.2' }, sessionId: 'dm-bob', userId: 'bob' })
  await until(() => webui.asker.list().length)
  void api('call', { tool: 'set_config', args: { replicas: 4, region: 'eu-west-1' }, sessionId: 'dm-alice', userId: 'alice' })
  await until(() => webui.asker.list().length === 2)

  const profile = join(dir, 'profile')
  context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    locale: 'zh-CN',
    viewport: { width: 1280, height: 800 },
  })
  const page = await context.newPage()
  await page.goto(webui.url)
  for (const locale of ['en-US', 'zh-CN']) {
    await page.selectOption('[data-test=language]', locale)
    await page.click('[data-test=tab-tools]')
    await page.click('[data-test=tool-deploy]')
    await page.waitForSelector('.k-form')
    await shot(page, 'tools', locale)
    // The form keeps what is typed and lists every violation by its path.
    await page.click('[data-test=tool-lookup]')
    await field(page, 'q').fill('The country whose capital sits on the Seine, famous for its bread, its cheese, its wine, its museums and its long history of revolutions.')
    await field(page, 'limit').fill('99')
    await field(page, 'limit').press('Tab')
    await page.waitForSelector('[data-test=form-issue]')
    await shot(page, 'form-errors', locale)
    await field(page, 'q').fill('France')
    await field(page, 'limit').fill('3')
    await field(page, 'limit').press('Tab')
    await page.click('[data-test=run]')
    await page.waitForSelector('[data-test=result]')
    await shot(page, 'result', locale)
    for (const view of ['approvals', 'tasks', 'grants', 'modes', 'quotas', 'log', 'changes']) {
      await page.click(`[data-test=tab-${view}]`)
      if (view === 'modes') {
        await page.fill('[data-test=mode-session]', 'group-42')
        await page.press('[data-test=mode-session]', 'Enter')
      }
      if (view === 'quotas') {
        await page.fill('[data-test=quota-session]', 'dm-alice')
        await page.fill('[data-test=quota-user]', 'alice')
        await page.waitForSelector('[data-test=quota-row]')
      }
      await page.waitForTimeout(300)
      await shot(page, view, locale)
      if (view === 'approvals') {
        // The diff card expanded: every line, and the expander to fold it again.
        const card = page.locator('[data-test=approval-set_config]')
        await card.locator('[data-test=preview-diff-expand]').click()
        await page.waitForTimeout(200)
        await shot(card, 'approval-preview', locale)
        await card.locator('[data-test=preview-diff-expand]').click()
      }
    }
  }
} finally {
  await context?.close()
  await ctx.fiber.dispose()
  await rm(dir, { recursive: true, force: true })
}

/** A unified diff of config/service.yml, 26 lines: more than the 20 a card shows folded. */
function configDiff(replicas, region) {
  return [
    '--- a/config/service.yml',
    '+++ b/config/service.yml',
    '@@ -1,12 +1,12 @@',
    ' service: api',
    ' image: registry.example.com/api',
    '-replicas: 2',
    `+replicas: ${replicas}`,
    '-region: us-east-1',
    `+region: ${region}`,
    ' resources:',
    '   cpu: 500m',
    '-  memory: 512Mi',
    '+  memory: 1Gi',
    ' probes:',
    '   path: /healthz',
    '   interval: 10s',
    '@@ -20,9 +20,10 @@',
    ' logging:',
    '   level: info',
    '-  format: text',
    '+  format: json',
    ' features:',
    '   search: true',
    '-  beta: true',
    '+  beta: false',
    '+  audit: true',
    ' owners: [platform]',
  ].join('\n')
}

/** The input of a form field, found by the key the form shows. */
function field(page, key) {
  return page.locator('.k-schema-item', { has: page.locator('h3', { hasText: new RegExp(`^${key}$`) }) }).locator('input').first()
}

/** A shot of the page (its viewport) or of one element (a locator) of it. */
async function shot(target, name, locale) {
  const path = join(out, `webui-${name}${locale === 'en-US' ? '' : `.${locale}`}.png`)
  await target.screenshot(target.url ? { path, fullPage: false } : { path })
  console.log(`wrote ${path.slice(root.length + 1)}`)
}

async function until(check) {
  const end = Date.now() + 10_000
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out preparing the screenshots')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
