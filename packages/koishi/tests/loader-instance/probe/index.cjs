// koishi-plugin-owner-probe: the loader test's hands inside a Koishi instance that Koishi's
// own worker started from koishi.yml. It talks to the test over the worker's IPC channel:
//
//   test → instance: { probe: { id, op: 'status' } }                     → { probe: { id, result: { database, background, tools } } }
//                    { probe: { id, op: 'initUser', userId, authority } } → { probe: { id, result: true } }
//                    { probe: { id, op: 'receive', userId, text, private? } } → { probe: { id, result: replies[] } } (in 'room', or a private chat)
//                    { probe: { id, op: 'online' } }                     → { probe: { id, result: true } } (the held bot connects)
//   instance → test: { probe: { event: 'sent', channelId, text } }       a message the bot sent on its own (a question)
//                    { probe: { event: 'log', type, name, content } }    every error and warning line of any logger
//
// A failed op answers { probe: { id, error } }.
//
// With DOGU_PROBE_BOT=held in its environment the mock bot is not online at the start (an
// adapter still connecting, as a real one is for a while after `koishi start`) until the
// 'online' op; a message it is asked to send meanwhile is refused, as a real adapter without
// its connection refuses it.
const { Logger, Universal, h } = require('koishi')

exports.name = 'owner-probe'

exports.apply = (ctx) => {
  const send = (probe) => process.send?.({ probe })
  const target = {
    colors: 0,
    levels: { base: 3 },
    record: (record) => {
      if (record.type === 'error' || record.type === 'warn') send({ event: 'log', type: record.type, name: record.name, content: record.content })
    },
  }
  Logger.targets.push(target)
  ctx.on('dispose', () => Logger.targets.splice(Logger.targets.indexOf(target), 1))

  // The mock bot can only reply to a mock client's message: what it sends on its own goes to the test.
  {
    const wrap = (bot) => {
      if (bot.__probed) return
      bot.__probed = true
      // After the mock bot's constructor, which makes it online.
      if (process.env.DOGU_PROBE_BOT === 'held') queueMicrotask(() => bot.offline())
      const original = bot.sendMessage.bind(bot)
      bot.sendMessage = async (channelId, content, referrer, options) => {
        if (options?.session) return original(channelId, content, referrer, options)
        if (bot.status !== Universal.Status.ONLINE) throw new Error(`bot ${bot.sid} is not online: nothing can be sent through it`)
        send({ event: 'sent', channelId, text: h.normalize(content).map((element) => element.toString(true)).join('') })
        return [`probe-${Date.now()}`]
      }
    }
    for (const bot of ctx.bots) wrap(bot)
    ctx.on('bot-added', (bot) => wrap(bot))
  }

  const ops = {
    status: () => ({
      database: !!ctx.get('database'),
      background: !!ctx.get('background'),
      tools: ctx.get('tools') ? ctx.get('tools').list().map((tool) => tool.name) : [],
    }),
    initUser: async ({ userId, authority }) => {
      await ctx.mock.initUser(userId, authority)
      return true
    },
    receive: ({ userId, text, private: privately }) => ctx.mock.client(userId, privately ? undefined : 'room').receive(text),
    online: () => {
      for (const bot of ctx.bots) bot.online()
      return true
    },
  }
  const onMessage = async (message) => {
    const request = message?.probe
    if (!request || typeof request.id !== 'number') return
    try {
      const op = ops[request.op]
      if (!op) throw new Error(`unknown op ${request.op}`)
      send({ id: request.id, result: await op(request) })
    } catch (error) {
      send({ id: request.id, error: String(error?.stack ?? error) })
    }
  }
  process.on('message', onMessage)
  ctx.on('dispose', () => process.off('message', onMessage))
}
