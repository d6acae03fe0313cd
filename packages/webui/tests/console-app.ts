import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Dogu, { type DoguPlugin } from '@dogu/cordis'
import { defineTool } from '@dogu/core'
import { Context } from 'cordis'
import Schema from 'schemastery'
import { guardLogs } from '../../../test-support/log-guard'
import { WebUI } from '../src'

const echoArgs = Schema.object({
  text: Schema.string().required().description({ 'en-US': 'What to repeat', 'zh-CN': '要重复的文字' } as unknown as string),
  times: Schema.natural().min(1).max(5).default(1).description('How many times'),
  style: Schema.union(['plain', 'shout'] as const).default('plain').description('How to say it'),
  tags: Schema.array(String).description('Labels to append'),
  extra: Schema.dict(Schema.string()).description('Extra key-value pairs'),
  options: Schema.object({ separator: Schema.string().default(' ') }).description('Nested options'),
})

type DoguConfig = DoguPlugin.Config

const deployArgs = Schema.object({ env: Schema.union(['staging', 'prod'] as const).required().description('Where to deploy') })

/** A Cordis app with Dogu's services, four tools and the console on a free loopback port; questions expire after `askTimeout` ms. */
export async function startConsoleApp(config: WebUI.Config = {}, options: { askTimeout?: number; tools?: DoguConfig['tools']; dir?: string } = {}) {
  // A folder given (the same one again: a restart) is the caller's to remove.
  const dir = options.dir ?? await mkdtemp(join(tmpdir(), 'dogu-webui-'))
  const removeDir = () => options.dir ? Promise.resolve() : rm(dir, { recursive: true, force: true })
  const ctx = new Context()
  guardLogs(ctx)
  await ctx.plugin(Dogu, {
    audit: { storePath: join(dir, 'audit.jsonl') }, permissions: { storePath: join(dir, 'permissions.json'), askTimeout: options.askTimeout ?? 60_000 },
    background: { storePath: join(dir, 'background.json') },
    ...(options.tools ? { tools: options.tools } : {}),
  })
  /** Releases every `wait` call still running (its signal is the other way out). */
  const gates = new Set<() => void>()
  await ctx.plugin({
    name: 'console-test-tools',
    inject: ['tools'],
    apply(ctx: Context) {
      ctx.tools.define(defineTool({
        name: 'echo',
        description: 'Repeat a text\n- up to five times\n- plainly or shouted',
        args: echoArgs,
        traits: { effect: 'read' },
        run: ({ text, times, style, tags, options }, call) => {
          call.progress(`repeating ${times} time(s)`)
          const word = style === 'shout' ? text.toUpperCase() : text
          return [Array(times).fill(word).join(options?.separator ?? ' '), ...(tags ?? [])].join(' ')
        },
      }))
      ctx.tools.define(defineTool({
        name: 'deploy',
        description: 'Deploy the current build',
        args: deployArgs,
        traits: { effect: 'write' },
        run: ({ env }) => ({ text: `deployed to ${env}`, data: { env, ok: true } }),
      }))
      ctx.tools.define(defineTool({
        name: 'wait',
        description: 'Wait until cancelled (moves to the background at once)',
        args: Schema.object({}),
        traits: { effect: 'read', timeout: 1, background: true },
        run: (_args, call) => new Promise<string>((resolve, reject) => {
          const release = () => resolve('released')
          gates.add(release)
          call.signal.addEventListener('abort', () => {
            gates.delete(release)
            reject(call.signal.reason)
          }, { once: true })
        }),
      }))
      ctx.tools.define(defineTool({
        name: 'html',
        description: 'Return markup',
        args: Schema.object({}),
        traits: { effect: 'read' },
        run: () => '<img src=x onerror="window.__pwned=1"><b>bold</b>',
      }))
    },
  })
  let fiber
  try {
    fiber = await ctx.plugin(WebUI, { port: 0, ...config })
  } catch (error) {
    await ctx.fiber.dispose()
    await removeDir()
    throw error
  }
  const webui = ctx.get('webui')!
  const base = webui.url
  return {
    ctx,
    webui,
    /** The console plugin's fiber: disposing it unloads the console alone. */
    fiber,
    base,
    /** Calls a console method by POST, as the page does. */
    async send(method: string, payload: unknown = {}, headers: Record<string, string> = {}) {
      const response = await fetch(`${base}/api/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(config.token ? { 'x-dogu-token': config.token } : {}), ...headers },
        body: JSON.stringify(payload),
        signal: AbortSignal.timeout(20_000),
      })
      return { status: response.status, body: await response.json() as any }
    },
    async dispose() {
      for (const release of [...gates]) release()
      await ctx.fiber.dispose()
      await removeDir()
    },
  }
}

/** Resolves with `check()`'s first value that is truthy and not an empty array; fails after `timeout` ms. */
export async function until<T>(check: () => T | Promise<T>, what: string, timeout = 10_000): Promise<NonNullable<T>> {
  const end = Date.now() + timeout
  while (true) {
    const value = await check()
    // An empty list is "not yet" (a question not asked yet), though JavaScript calls it true.
    if (value && !(Array.isArray(value) && !value.length)) return value as NonNullable<T>
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
