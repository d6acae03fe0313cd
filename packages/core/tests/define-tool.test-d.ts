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

test('an annotation of a handler is checked against the schema, and the error is the handler\'s', () => {
  defineTool({
    name: 'deploy',
    description: 'Deploy',
    args: deployArgs,
    run: ({ env }: DeployArgs) => env,
  })
  defineTool({
    name: 'deploy',
    description: 'Deploy',
    args: deployArgs,
    // @ts-expect-error: env is 'staging' | 'prod', not a number (reported here, at run)
    run: (args: { env: number }) => args.env,
  })
  defineTool({
    name: 'deploy',
    description: 'Deploy',
    args: deployArgs,
    // @ts-expect-error: the same for permission
    permission: (args: { env: number }) => ({ name: 'deploy:run', target: String(args.env) }),
    run: (args) => args.env,
  })
  // A supertype of what the schema returns is a fine annotation; the tool keeps the schema's type.
  const tool = defineTool({
    name: 'deploy',
    description: 'Deploy',
    args: deployArgs,
    run: (args: { env: string }) => args.env,
  })
  expectTypeOf(tool).toEqualTypeOf<Tool<DeployArgs>>()
})

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

test('a schema written inline types the tool, and a run that annotates its parameter is checked against it', () => {
  // The tool's type comes from the inline schema, not from the annotation: days is there.
  const annotated = defineTool({
    name: 'weather',
    description: 'Weather',
    args: Schema.object({ city: Schema.string().required(), days: Schema.natural().default(3) }),
    run: async (args: { city: string }) => args.city,
  })
  expectTypeOf(annotated).toEqualTypeOf<Tool<WeatherArgs>>()
  expectTypeOf(annotated.run).parameter(0).toEqualTypeOf<WeatherArgs>()
  const exact = defineTool({
    name: 'weather',
    description: 'Weather',
    args: Schema.object({ city: Schema.string().required(), days: Schema.natural().default(3) }),
    run: async (args: WeatherArgs) => `${args.city} in ${args.days} days`,
  })
  expectTypeOf(exact).toEqualTypeOf<Tool<WeatherArgs>>()
  const untouched = defineTool({
    name: 'weather',
    description: 'Weather',
    args: Schema.object({ city: Schema.string().required(), days: Schema.natural().default(3) }),
    run: () => 'sunny',
  })
  expectTypeOf(untouched).toEqualTypeOf<Tool<WeatherArgs>>()
  defineTool({
    name: 'weather',
    description: 'Weather',
    args: Schema.object({ city: Schema.string().required() }),
    // @ts-expect-error: city is a string: the annotation must match what the inline schema returns
    run: async (args: { city: number }) => args.city,
  })
})

// TypeScript 5.9 cannot type an unannotated `run` from a schema written inline: its first
// inference pass skips generic calls that return something callable (a schemastery schema
// is callable), and `run`'s parameter is fixed in the second pass before the object literal
// is inferred from. No signature of defineTool changes that (the skip is decided by the
// callee, Schema.object, and only context-sensitive properties are inferred from before
// `run`), so that case is `unknown`, never `any`: using it is a compile error.
test('an unannotated run beside an inline schema is unknown, never any', () => {
  const tool = defineTool({
    name: 'weather',
    description: 'Weather',
    args: Schema.object({ city: Schema.string().required(), days: Schema.natural().default(3) }),
    run: async (args) => {
      expectTypeOf(args).not.toBeAny()
      expectTypeOf(args).toBeUnknown()
      // @ts-expect-error: args is unknown; declare the schema first, or annotate args
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

test('a tool without arguments has unknown arguments, unless run annotates them', () => {
  expectTypeOf(defineTool({ name: 'ping', description: 'Ping', run: () => 'pong' })).toEqualTypeOf<Tool<unknown>>()
  expectTypeOf(defineTool({ name: 'ping', description: 'Ping', run: (args: { text?: string }) => args.text ?? 'pong' })).toEqualTypeOf<Tool<{ text?: string }>>()
})
