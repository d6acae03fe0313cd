// The Dogu plugin's `mcp` config: without @dogu/mcp installed the owner is told what to
// install, once, and nothing else fails; with no servers nothing is loaded at all.
import { describe, expect, it } from 'vitest'
import { importWith } from '../src/mcp-import'
import { koishiApp, settle } from './koishi-app'

/** The error Node's ESM loader gives for a package that is not installed. */
function notInstalled(): Error {
  return Object.assign(new Error('Cannot find package \'@dogu/mcp\' imported from /srv/bot/node_modules/koishi-plugin-dogu/lib/index.cjs'), { code: 'ERR_MODULE_NOT_FOUND' })
}

describe('the Dogu plugin\'s mcp config', () => {
  it('without @dogu/mcp installed, says what to install and loads nothing', async () => {
    const { app, guard } = await koishiApp()
    guard.expect('mcp.servers needs the package @dogu/mcp: install it in this Koishi instance (npm install @dogu/mcp), then reload dogu')
    app.plugin({ name: 'dogu-mcp', inject: ['tools'], apply: (ctx) => importWith(ctx, { servers: { docs: { url: 'https://docs.example/mcp' } } }, () => Promise.reject(notInstalled())) })
    await settle(app)
    await new Promise((resolve) => setImmediate(resolve))
    expect(app.tools.sources()).toEqual([])
  })

  it('loads nothing without servers, and a failure that is not a missing package is not hidden', async () => {
    const { app, guard } = await koishiApp()
    let loads = 0
    app.plugin({ name: 'dogu-mcp-empty', inject: ['tools'], apply: (ctx) => importWith(ctx, { servers: {} }, async () => { loads++; return { McpClientPlugin: () => {} } }) })
    await settle(app)
    expect(loads).toBe(0)
    guard.expect('SyntaxError: Unexpected token')
    app.plugin({ name: 'dogu-mcp-broken', inject: ['tools'], apply: (ctx) => importWith(ctx, { servers: { docs: {} } }, () => Promise.reject(new SyntaxError('Unexpected token'))) })
    await settle(app)
    await new Promise((resolve) => setImmediate(resolve))
  })
})
