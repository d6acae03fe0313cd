import Schema from 'schemastery'
import { ActiveCall, type CallHooks } from '../../src/active-call'
import { ParseStage } from '../../src/pipeline/parse-stage'
import type { PipelineShared } from '../../src/pipeline/pipeline-host'
import { SettleStage } from '../../src/pipeline/settle-stage'
import { ValidateStage } from '../../src/pipeline/validate-stage'
import { defineTool, type Tool, ToolRegistry, type ToolRegistryOptions, type ToolResult } from '../../src'
import { ToolEntry } from '../../src/tool-entry'

export const session = { id: 's1', userId: 'alice' }

const weatherArgs = Schema.object({ city: Schema.string().required(), days: Schema.natural().default(1) })

/** The options of `weather`, for a spec that defines a variant of it. */
export const weatherOptions = {
  name: 'weather',
  description: 'Weather for a city',
  args: weatherArgs,
  traits: { effect: 'read' as const },
  run: ({ city }: { city: string }) => `${city}: sunny`,
}

/** A read tool `weather({ city })` that answers at once. */
export const weather = defineTool(weatherOptions)

/** Hooks that do nothing: a stage under test does not run the tool's `call` methods. */
const quietHooks: CallHooks = { progress() {}, ask: async () => {}, elicit: async () => ({ action: 'cancel', reason: 'test' }), log() {}, aborted() {}, expired() {} }

/**
 * One stage's world alone: a registry as the host, the shared state every stage reads, and
 * calls made the way the pipeline prepares them; each call's result lands in `ended`.
 */
export function stageWorld(tools: Tool[] = [weather], options: ToolRegistryOptions = {}) {
  const events: [string, unknown[]][] = []
  const host = new ToolRegistry({ ...options, emit: (name: string, ...args: unknown[]) => { events.push([name, args]) } })
  const entries = new Map(tools.map((tool) => [tool.name, new ToolEntry(tool, {}, 'test')]))
  const shared: PipelineShared = { host, entries, session, limits: { maxContentLength: 200, maxArgumentsLength: 1000, timeout: 60_000 }, encodedPaths: () => [] }
  const settle = new SettleStage(shared)
  const parse = new ParseStage(shared, settle)
  const validate = new ValidateStage(shared, settle, quietHooks)
  const ended = new Map<ActiveCall, ToolResult>()
  /** A prepared call, as `CallPipeline.prepare` makes it, whose result goes to `ended`. */
  const call = (name: string, args: unknown = { city: 'Paris' }, id = 'c1'): ActiveCall => {
    const parsed = parse.enter({ id, name, arguments: JSON.stringify(args) })
    if (!('entry' in parsed)) throw new Error(`not parsed: ${parsed.content}`)
    const made = validate.enter(parsed)
    if (!(made instanceof ActiveCall)) throw new Error(`not valid: ${made.content}`)
    made.sink = (result) => { ended.set(made, result) }
    return made
  }
  return { host, shared, settle, parse, validate, call, ended, events, entries }
}
