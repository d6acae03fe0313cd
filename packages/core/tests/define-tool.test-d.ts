import Schema from 'schemastery'
import { expectTypeOf, test } from 'vitest'
import { defineTool, type ToolCall } from '../src'

test('run receives args typed from the schema', () => {
  defineTool({
    name: 'deploy',
    description: 'Deploy',
    args: Schema.object({
      env: Schema.union(['staging', 'prod'] as const).required(),
      retries: Schema.natural().default(1),
      tags: Schema.array(String),
    }),
    permission: (args) => {
      expectTypeOf(args.env).toEqualTypeOf<'staging' | 'prod'>()
      return { name: 'deploy:run', target: args.env }
    },
    run: (args, call) => {
      expectTypeOf(args.env).toEqualTypeOf<'staging' | 'prod'>()
      expectTypeOf(args.retries).toEqualTypeOf<number>()
      expectTypeOf(args.tags).toEqualTypeOf<string[]>()
      expectTypeOf(call).toEqualTypeOf<ToolCall>()
      expectTypeOf(call.signal).toEqualTypeOf<AbortSignal>()
      return `deployed ${args.env}`
    },
  })
})
