import Schema from 'schemastery'
import { expectTypeOf, test } from 'vitest'
import { defineTool, type PermissionSpec, type Tool, type ToolCall } from '../src'

const deployArgs = Schema.object({
  env: Schema.union(['staging', 'prod'] as const).required(),
  retries: Schema.natural().default(1),
  tags: Schema.array(String),
})
type DeployArgs = Schemastery.TypeT<typeof deployArgs>

test('run and permission receive what the schema returns', () => {
  const tool = defineTool({
    name: 'deploy',
    description: 'Deploy',
    args: deployArgs,
    permission: (args) => {
      expectTypeOf(args).toEqualTypeOf<DeployArgs>()
      return { name: 'deploy:run', target: args.env }
    },
    run: (args, call) => {
      expectTypeOf(args).toEqualTypeOf<DeployArgs>()
      expectTypeOf(args.retries).toEqualTypeOf<number>()
      expectTypeOf(args.tags).toEqualTypeOf<string[]>()
      expectTypeOf(args.env).toExtend<string>()
      expectTypeOf(call).toEqualTypeOf<ToolCall>()
      expectTypeOf(call.signal).toEqualTypeOf<AbortSignal>()
      return `deployed ${args.env}`
    },
  })
  expectTypeOf(tool).toEqualTypeOf<Tool<DeployArgs>>()
  expectTypeOf(tool.permission).toEqualTypeOf<((args: DeployArgs, call: ToolCall) => PermissionSpec) | undefined>()
})

test('typed parameters of run are checked against the schema', () => {
  defineTool({
    name: 'deploy',
    description: 'Deploy',
    args: deployArgs,
    run: ({ env }: DeployArgs) => env,
  })
  defineTool({
    name: 'deploy',
    description: 'Deploy',
    // @ts-expect-error a number is not what the schema returns
    args: deployArgs,
    run: (args: { env: number }) => args.env,
  })
})
