// koishi-plugin-notes: a tool plugin as a bot author writes one (CommonJS, as Koishi loads it).
const { defineTool } = require('@dogu/core')
const { Schema } = require('koishi')

exports.name = 'notes'
exports.inject = ['tools']

exports.apply = (ctx) => {
  ctx.tools.define(defineTool({
    name: 'save_note',
    description: 'Save a note',
    args: Schema.object({ text: Schema.string().required() }),
    traits: { effect: 'write' },
    run: ({ text }) => `saved “${text}”`,
  }))
  // The owner's policy, as a middleware: no notes about the launch.
  ctx.tools.use((call, next) => /launch/i.test(call.args.text)
    ? { status: 'denied', reason: 'notes about the launch are closed' }
    : next(), { name: 'no-launch-notes', tools: 'save_note' })
}
