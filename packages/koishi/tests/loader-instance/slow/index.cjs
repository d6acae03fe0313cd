// koishi-plugin-slow-build: a slow tool as a bot author writes one (CommonJS, as Koishi loads
// it). `build` outlives its 1 ms timeout, so a chat call of it becomes a background task, and
// runs until its call is aborted: a restart always cuts it off (loader-restart-console.spec.ts).
const { defineTool } = require('@dogu/core')
const { Schema } = require('koishi')

exports.name = 'slow-build'
exports.inject = ['tools']

exports.apply = (ctx) => {
  ctx.tools.define(defineTool({
    name: 'build',
    description: 'Build the project (slow)',
    args: Schema.object({ target: Schema.string().required() }),
    traits: { effect: 'read', timeout: 1 },
    run: (_, { signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })),
  }))
}
