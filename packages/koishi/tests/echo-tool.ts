import { defineTool } from '@dogu/core'
import { type App, type Context, Schema } from 'koishi'

const echoArgs = Schema.object({ text: Schema.string().required() })

/** Loads a plugin that defines `echo({ text })`, a read tool that answers with its text. */
export function echoTool(app: App): void {
  app.plugin({
    name: 'echo-tool',
    inject: ['tools'],
    apply(ctx: Context) {
      ctx.tools.define(defineTool({
        name: 'echo',
        description: 'Repeat a text',
        args: echoArgs,
        traits: { effect: 'read' },
        run: (args) => args.text,
      }))
    },
  })
}
