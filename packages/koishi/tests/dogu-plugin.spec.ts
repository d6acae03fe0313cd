import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { BackgroundEngine, defineTool, PermissionEngine, type ToolCall } from '@dogu/core'
import type { Context } from 'koishi'
import { describe, expect, it, vi } from 'vitest'
import * as Dogu from '../src'
import { BackgroundService, PermissionService, ToolService } from '../src'
import manifest from '../package.json'
import { koishiApp, settle } from './koishi-app'
import { logGuard } from '../../../test-support/log-guard'

/** Every description in a schema tree, as `path: { locale: text }`. */
function descriptions(schema: any, path = '$', out: Record<string, unknown> = {}): Record<string, unknown> {
  if (schema.meta?.description !== undefined) out[path] = schema.meta.description
  for (const [key, inner] of Object.entries(schema.dict ?? {})) descriptions(inner, `${path}.${key}`, out)
  if (schema.inner) descriptions(schema.inner, `${path}[]`, out)
  return out
}

describe('the Dogu plugin for Koishi', () => {
  it('is a Koishi plugin module: name, inject, Config, apply; with its market metadata', () => {
    expect(Dogu.name).toBe('dogu')
    expect(Dogu.inject).toEqual({ database: { required: false } })
    expect(typeof Dogu.apply).toBe('function')
    expect(manifest.name).toBe('koishi-plugin-dogu')
    expect(manifest.koishi.description).toEqual({ 'zh-CN': expect.any(String), 'en-US': expect.any(String) })
    expect(manifest.koishi.service.implements).toEqual(['tools', 'background', 'audit'])
    expect(manifest.peerDependencies.koishi).toBe('^4.18.0')
  })

  it('fills its config defaults, section by section', () => {
    expect(Dogu.Config({})).toEqual({
      defaultAuthority: 1,
      tools: { maxContentLength: 50_000, maxArgumentsLength: 1_000_000, redact: { env: [], patterns: [], builtin: true }, quotas: [], maxRunning: {}, repair: true },
      permissions: { rules: [], mode: 'default', askTimeout: 300_000, approverAuthority: 4, callerMayApprove: true, syncInterval: 5_000, durable: true, maxPending: 1_000 },
      background: { maxTasks: 200, maxAgeMs: 7 * 24 * 3600_000, maxResultLength: 50_000, leaseMs: 30_000, syncInterval: 5_000 },
      approvals: { enabled: true, buttons: ['discord', 'telegram'], route: 'channel', approvers: [] },
      commands: { enabled: true, authority: { tools: 1, tasks: 1, run: 3, grants: 3, revoke: 3, mode: 4, mcp: 3, mcpAuth: 4 }, maxOutput: 1000, listLimit: 20 },
      notices: { enabled: true, preview: 200 },
      audit: { enabled: true, hashArguments: false, maxRecords: 10_000, maxAgeMs: 30 * 24 * 3600_000, authority: 3 },
      chatluna: { enabled: true, include: [], exclude: [], groups: [], mode: 'eager', eager: [], images: false },
      console: { enabled: true, authority: 4, logSize: 200 },
      // No servers: @dogu/mcp is not loaded (its own schema fills the rest when it is).
      mcp: { servers: {}, reconnect: {}, oauth: {} },
    })
    expect(() => Dogu.Config({ tools: { maxContentLength: 0 } })).toThrow(/maxContentLength/)
    expect(() => Dogu.Config({ permissions: { mode: 'yolo' as never } })).toThrow(/mode/)
    expect(() => Dogu.Config({ permissions: { durable: 'yes' as never } })).toThrow(/durable/)
    expect(() => Dogu.Config({ permissions: { maxPending: 0 } })).toThrow(/maxPending/)
  })

  it('describes every field of its config in Chinese and English for the console', () => {
    const all = descriptions(Dogu.Config)
    expect(Object.keys(all)).toEqual(expect.arrayContaining([
      '$.defaultAuthority', '$.tools', '$.tools.maxContentLength', '$.permissions', '$.permissions.rules',
      '$.permissions.rules[].koishiPermission', '$.permissions.rules[].sandboxed', '$.permissions.durable', '$.permissions.maxPending', '$.background', '$.background.storePath',
    ]))
    for (const [path, text] of Object.entries(all)) {
      expect(text, path).toEqual(expect.objectContaining({ 'zh-CN': expect.stringMatching(/\p{Script=Han}/u), 'en-US': expect.any(String) }))
    }
  })

  it('provides ctx.tools and ctx.background, adds Dogu\'s methods to ctx.permissions, and takes all of it away', async () => {
    const { app, dogu } = await koishiApp()
    expect(app.tools).toBeInstanceOf(ToolService)
    expect(app.background).toBeInstanceOf(BackgroundService)
    expect(app.permissions.engine).toBeInstanceOf(PermissionEngine)
    expect(app.tools.registry.permissions).toBe(app.permissions.engine)
    expect(app.tools.registry.background).toBeInstanceOf(BackgroundEngine)
    expect(app.tools.list().map((tool) => tool.name)).toEqual(['task_cancel', 'task_status'])
    const registry = app.tools.registry
    dogu!.dispose()
    await settle(app)
    expect(app.get('tools')).toBeUndefined()
    expect(app.get('background')).toBeUndefined()
    expect((app.permissions as any).authorize).toBeUndefined()
    expect(registry.permissions).toBeUndefined()
    expect(registry.background).toBeUndefined()
    expect(registry.list()).toEqual([])
  })

  it('loads the chat parts after the services: the chat asker and the dogu.* commands, gone with the plugin', async () => {
    const { app, dogu } = await koishiApp({ dogu: { permissions: { askTimeout: 60_000 }, approvals: {}, notices: {} } })
    const names = () => ['dogu.tools', 'dogu.run', 'dogu.tasks', 'dogu.grants', 'dogu.revoke', 'dogu.mode'].filter((name) => app.$commander.get(name))
    expect(names()).toHaveLength(6)
    // A write call from a chat session is asked about: the chat asker is there (no bot can
    // post in this channel, so it fails and the request is denied at once, saying so).
    app.tools.define(defineTool({ name: 'save', description: 'Save', traits: { effect: 'write' }, run: () => 'saved' }))
    logGuard.expect('cannot ask in discord:9: no bot of platform "discord" is there')
    const [result] = await app.tools.execute([{ id: 'c1', name: 'save' }], { session: { id: 'discord:9', platform: 'discord', channelId: '9', userId: 'u1' } })
    expect(result).toMatchObject({ status: 'denied', content: expect.stringContaining('every asker failed') })
    dogu!.dispose()
    await settle(app)
    expect(names()).toEqual([])
  })

  it('leaves a chat part out when its section says so', async () => {
    const { app } = await koishiApp({ dogu: { commands: { enabled: false } } })
    expect(app.$commander.get('dogu.tools')).toBeUndefined()
  })

  it('ends a call in flight cancelled when the tools service stops', async () => {
    const { app } = await koishiApp({ dogu: false })
    const tools = app.plugin(ToolService)
    await settle(app)
    let started!: () => void
    const running = new Promise<void>((resolve) => { started = resolve })
    app.tools.define(defineTool({
      name: 'wait',
      description: 'Waits until aborted',
      traits: { effect: 'read' },
      run: (_, call) => new Promise((_, reject) => {
        call.signal.addEventListener('abort', () => reject(call.signal.reason))
        call.progress('waiting')
        started()
      }),
    }))
    const pending = app.tools.execute([{ id: 'c1', name: 'wait' }], { session: { id: 's' } })
    await running
    tools.dispose()
    expect(await pending).toEqual([expect.objectContaining({ status: 'cancelled', content: 'Cancelled: the tool service stopped. Last progress: waiting' })])
    expect(app.get('tools')).toBeUndefined()
  })

  describe('a task running when the Dogu plugin stops is interrupted', () => {
    async function running() {
      const setup = await koishiApp()
      const slow: ToolCall[] = []
      // Loaded before the tool's plugin is unloaded: cordis 3 resets a service's dependents in load order.
      setup.app.plugin({
        name: 'slow-pack',
        inject: ['tools'],
        apply(ctx: Context) {
          ctx.tools.define(defineTool({ name: 'slow', description: 'Slow', traits: { effect: 'read', timeout: 1_000 }, run: (_, call) => new Promise(() => { slow.push(call) }) }))
        },
      })
      await settle(setup.app)
      vi.useFakeTimers({ now: 1_000_000, toFake: ['setTimeout', 'clearTimeout', 'Date'] })
      const pending = setup.app.tools.execute([{ id: 'c1', name: 'slow' }], { session: { id: 's1' } })
      await vi.advanceTimersByTimeAsync(1_000)
      const [{ taskId }] = await pending
      const stored = async () => JSON.parse(await readFile(join(setup.dir, 'background.json'), 'utf8')).tasks
      return { ...setup, slow, taskId: taskId!, engine: setup.app.background.engine, stored }
    }

    it('disposing the Dogu plugin', async () => {
      const { app, dogu, slow, taskId, engine, stored } = await running()
      dogu!.dispose()
      await engine.dispose()
      expect(slow[0].signal.reason.message).toBe('the background service stopped')
      expect(await stored()).toEqual([expect.objectContaining({ id: taskId, status: 'interrupted', settledAt: 1_001_000 })])
      expect(app.get('background')).toBeUndefined()
    })

    it('reloading the Dogu plugin (a config update); the new service reads the task so', async () => {
      const { app, dogu, slow, taskId, engine } = await running()
      dogu!.update({ ...dogu!.config, tools: { maxContentLength: 10_000 } })
      await engine.dispose()
      await settle(app)
      expect(slow[0].signal.reason.message).toBe('the background service stopped')
      expect(app.background.engine).not.toBe(engine)
      expect(app.background.get(taskId)).toMatchObject({ status: 'interrupted', settledAt: 1_001_000 })
    })

    it('unloading the tools service alone', async () => {
      const { app, slow, taskId, engine, stored } = await running()
      const tools = [...app.registry.values()].find((runtime) => runtime.plugin === ToolService)!
      tools.dispose()
      await engine.dispose()
      expect(slow[0].signal.reason.message).toBe('the background service stopped')
      expect(await stored()).toEqual([expect.objectContaining({ id: taskId, status: 'interrupted' })])
      expect(app.get('background')).toBeUndefined()
    })
  })

  it('loads each service on its own too, for apps that pick', async () => {
    const { app, dir } = await koishiApp({ dogu: false })
    app.plugin(PermissionService, { storePath: join(dir, 'p.json') })
    app.plugin(ToolService)
    await settle(app)
    expect(app.tools.registry.permissions).toBe(app.permissions.engine)
    expect(app.get('background')).toBeUndefined()
  })
})
