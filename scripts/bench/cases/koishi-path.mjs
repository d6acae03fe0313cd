// `yarn bench core`: the Koishi path (issue 44). A Koishi app with the mock adapter and
// koishi-plugin-dogu at its defaults (auditing on), loaded through require from
// packages/koishi/node_modules as packages/koishi/tests do, against the built lib; the
// toolset is the one a Koishi plugin makes for a chat session (`toolsetFor`), from a message
// the mock bot received.
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { root } from '../harness.mjs'

export async function koishiPath({ args, handler, dataDir }) {
  const require = createRequire(join(root, 'packages/koishi/package.json'))
  const { App } = require('koishi')
  const { MockBot } = require('@koishijs/plugin-mock')
  const Dogu = require(join(root, 'packages/koishi/lib/index.cjs'))
  const app = new App()
  const mock = app.plugin(MockBot, { selfId: '514' })
  await app.start()
  app.plugin(Dogu, {
    permissions: { storePath: join(dataDir, 'koishi-permissions.json') },
    background: { storePath: join(dataDir, 'koishi-background.json') },
    audit: { storePath: join(dataDir, 'koishi-audit.jsonl') },
  })
  app.plugin({
    name: 'weather',
    inject: ['tools'],
    apply(ctx) {
      ctx.tools.define({ name: 'weather', description: 'Weather for a city', args, traits: { effect: 'read' }, run: handler })
    },
  })
  await app.lifecycle.flush()
  if (!app.tools) throw new Error('koishi-plugin-dogu did not provide ctx.tools')
  // A running bot turns its event loop all the time, and its audit file is open within
  // milliseconds; the bench's loop never yields, so it starts once the file is open (else
  // every record would wait in the bounded queue, and the figure would be its trimming).
  await app.audit?.log?.ready
  // The session of a message in a group channel, as a Koishi middleware sees it.
  let session
  const dispose = app.middleware((seen, next) => {
    session = seen
    return next()
  }, true)
  await app.mock.client('123', '456').receive('hello')
  dispose()
  if (!session) throw new Error('no message reached the middleware: the Koishi path has no chat session')
  const toolset = await Dogu.toolsetFor(app, session)
  return {
    app,
    toolset,
    async stop() {
      const audit = app.get?.('audit')?.log
      mock.dispose()
      await app.stop()
      await audit?.stop?.()
    },
  }
}
