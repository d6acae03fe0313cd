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

// TypeScript 5.9 cannot type `run` from a schema written inline: its first inference pass
// skips generic calls that return something callable (a schemastery schema is callable),
// and `run`'s parameter is fixed in the second pass before the object literal is inferred
// from. No signature of defineTool changes that, so the untyped case is `unknown`, not `any`.
const weatherArgs = Schema.object({ city: Schema.string().required(), days: Schema.natural().default(3) })
type WeatherArgs = Schemastery.TypeT<typeof weatherArgs>

test('a schema declared first types run', () => {
  defineTool({
    name: 'weather',
    description: 'Weather',
    args: weatherArgs,
    run: async (args) => {
      expectTypeOf(args).not.toBeAny()
      expectTypeOf(args).toEqualTypeOf<WeatherArgs>()
      expectTypeOf(args.city).toEqualTypeOf<string>()
      expectTypeOf(args.days).toEqualTypeOf<number>()
      return `${args.city} in ${args.days} days`
    },
  })
})

test('a schema written inline leaves run untyped, and says so: unknown, never any', () => {
  const tool = defineTool({
    name: 'weather',
    description: 'Weather',
    args: Schema.object({ city: Schema.string().required(), days: Schema.natural().default(3) }),
    run: async (args) => {
      expectTypeOf(args).not.toBeAny()
      expectTypeOf(args).toBeUnknown()
      // @ts-expect-error: args is unknown; declare the schema first
      return args.city
    },
  })
  expectTypeOf(tool).toEqualTypeOf<Tool<unknown>>()
  defineTool({
    name: 'weather',
    description: 'Weather',
    args: Schema.object({ city: Schema.string().required() }),
    // @ts-expect-error: destructuring unknown arguments
    run: ({ city }) => city,
  })
})

test('an inline schema types run when run annotates its parameter', () => {
  const tool = defineTool({
    name: 'weather',
    description: 'Weather',
    args: Schema.object({ city: Schema.string().required(), days: Schema.natural().default(3) }),
    run: async (args: WeatherArgs) => `${args.city} in ${args.days} days`,
  })
  expectTypeOf(tool).toEqualTypeOf<Tool<WeatherArgs>>()
  defineTool({
    name: 'weather',
    description: 'Weather',
    // @ts-expect-error: the annotation must match what the inline schema returns
    args: Schema.object({ city: Schema.string().required() }),
    run: async (args: { city: number }) => args.city,
  })
})

test('a tool without arguments has unknown arguments', () => {
  expectTypeOf(defineTool({ name: 'ping', description: 'Ping', run: () => 'pong' })).toEqualTypeOf<Tool<unknown>>()
})
