import { defineTool } from '@dogu/core'
import { Schema } from 'koishi'
import { describe, expect, it } from 'vitest'
import { doguSession, localeOf, toolsetFor } from '../src'
import { koishiApp, sessionOf } from './koishi-app'

describe('doguSession', () => {
  it('maps a guild message: id platform:channelId, the user with their platform, the authority Koishi loaded', async () => {
    const { app } = await koishiApp({ database: true, dogu: false })
    await app.mock.initUser('123', 3)
    const session = await sessionOf(app, '123', '456')
    expect(doguSession(session)).toEqual({ id: 'mock:456', userId: '123', channelId: '456', guildId: '456', platform: 'mock', authority: 3 })
  })

  it('maps a private chat to a session of its own, per user', async () => {
    const { app } = await koishiApp({ dogu: false })
    const alice = await sessionOf(app, '123')
    const bob = await sessionOf(app, '789')
    expect(doguSession(alice)).toEqual({ id: 'mock:private:123', userId: '123', channelId: 'private:123', platform: 'mock', authority: 1 })
    expect(doguSession(bob).id).toBe('mock:private:789')
  })

  it('uses defaultAuthority when Koishi holds no user (no database), and looks nothing up', async () => {
    const { app } = await koishiApp({ dogu: false })
    const session = await sessionOf(app, '123', '456')
    expect(session.user).toBeUndefined()
    expect(doguSession(session, { defaultAuthority: 2 }).authority).toBe(2)
    expect(doguSession(session).authority).toBe(1)
    // A session without a channel (a non-message event).
    expect(doguSession(app.mock.session({ user: { id: '5' } })).id).toBe('mock:private:5')
  })
})

describe('localeOf', () => {
  it('reads the session\'s locales first, then the user\'s, as Koishi\'s session.text does', async () => {
    const { app } = await koishiApp({ database: true, dogu: false })
    await app.mock.initUser('123', 1, { locales: ['en-US'] })
    await app.mock.initUser('124', 1)
    expect(localeOf(await sessionOf(app, '123', '456'))).toBe('en-US')
    expect(localeOf(await sessionOf(app, '124', '456'))).toBeUndefined()
    const session = await sessionOf(app, '123', '456')
    session.locales = ['zh-CN']
    expect(localeOf(session)).toBe('zh-CN')
  })
})

describe('toolsetFor', () => {
  it('makes a toolset for the resolved session, in the user\'s locale', async () => {
    const { app } = await koishiApp({ database: true })
    await app.mock.initUser('123', 4, { locales: ['zh-CN'] })
    const args = Schema.object({ city: Schema.string().required().description('City').i18n({ 'zh-CN': '城市' }) })
    app.tools.define(defineTool({ name: 'weather', description: 'Weather', args, traits: { effect: 'read' }, run: ({ city }, call) => `${city} ${call.session.authority}` }))
    const toolset = await toolsetFor(app, await sessionOf(app, '123', '456'), { include: ['weather'] })
    expect(toolset.session).toMatchObject({ id: 'mock:456', userId: '123', platform: 'mock', authority: 4, koishiPermissions: [] })
    expect(toolset.definitions('json')[0].parameters).toMatchObject({ properties: { city: { description: '城市' } } })
    const [result] = await toolset.execute([{ id: 'c1', name: 'weather', arguments: { city: 'Hangzhou' } }])
    expect(result).toMatchObject({ status: 'ok', content: 'Hangzhou 4' })
    // Options pass through; an explicit locale wins.
    const english = await toolsetFor(app, await sessionOf(app, '123', '456'), { locale: 'en-US', exclude: ['task_*'] })
    expect(english.names).toEqual(['weather'])
    expect(english.definitions('json')[0].parameters).toMatchObject({ properties: { city: { description: 'City' } } })
  })

  it('without Dogu\'s permissions, maps the session alone', async () => {
    const { app } = await koishiApp({ dogu: false })
    app.plugin((await import('../src')).ToolService)
    await app.lifecycle.flush()
    const toolset = await toolsetFor(app, await sessionOf(app, '123', '456'))
    expect(toolset.session).toEqual({ id: 'mock:456', userId: '123', channelId: '456', guildId: '456', platform: 'mock', authority: 1 })
  })
})
