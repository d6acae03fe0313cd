import type { JsonToolDefinition, Loosening } from '@dogu/core'
import { CallbackManager, type CallbackManagerForToolRun, parseCallbackConfigArg } from '@langchain/core/callbacks/manager'
import type { ToolCall } from '@langchain/core/messages/tool'
import { StructuredTool, type ToolReturnType, type ToolRunnableConfig } from '@langchain/core/tools'
import type { JSONSchema } from '@langchain/core/utils/json_schema'
import type { DoguToolOutput } from './tool-output'

/** Runs one call of a Dogu tool: its arguments as the model sent them, and the tool's config. */
export type DoguCallRunner = (args: unknown, config: ToolRunnableConfig) => Promise<DoguToolOutput>

/**
 * A Dogu tool as a LangChain `StructuredTool`: named as the Dogu tool, its `schema` the tool's
 * plain JSON Schema (what `bindTools` sends the model), its calls made through Dogu's pipeline.
 */
export class DoguStructuredTool extends StructuredTool<JSONSchema, unknown, unknown, DoguToolOutput> {
  static override lc_name(): string {
    return 'DoguStructuredTool'
  }

  name: string
  description: string
  schema: JSONSchema
  /**
   * Where `schema` says less than Dogu's schema (`toolset.loosened('json')`): calls are still
   * checked against the exact rule, and refused with it. Empty when the schema is exact.
   */
  readonly loosened: readonly Loosening[]

  constructor(definition: JsonToolDefinition, loosened: readonly Loosening[], private readonly runner: DoguCallRunner) {
    super()
    this.name = definition.name
    this.description = definition.description
    this.schema = definition.parameters as JSONSchema
    this.loosened = loosened
  }

  /**
   * LangChain's `call`, less its schema check. LangChain validates the arguments against
   * `schema` and throws `ToolInputParsingException` before `_call` (ToolNode then tells the
   * model "Received tool input did not match expected schema"); Dogu repairs and validates
   * them itself and answers with the paths it refused, so the arguments go to it as sent.
   * The callbacks (tracing, `streamEvents`) are LangChain's, as in its own `call`.
   */
  override async call<TArg, TConfig extends ToolRunnableConfig | undefined>(arg: TArg, configArg?: TConfig, tags?: string[]): Promise<ToolReturnType<TArg, TConfig, DoguToolOutput>> {
    const toolCall = isToolCall(arg) ? arg : undefined
    const args = toolCall ? toolCall.args : arg
    const config = parseCallbackConfigArg(configArg) as ToolRunnableConfig
    const callbacks = CallbackManager.configure(config.callbacks, this.callbacks, config.tags ?? tags, this.tags, config.metadata, this.metadata, { verbose: this.verbose })
    const toolCallId = toolCall?.id ?? config.toolCall?.id
    const input = args && typeof args === 'object' && !Array.isArray(args) ? args as Record<string, unknown> : JSON.stringify(args) ?? ''
    const run = await callbacks?.handleToolStart(this.toJSON(), input, config.runId, undefined, undefined, undefined, config.runName ?? this.name, toolCallId)
    delete config.runId
    let output: DoguToolOutput
    try {
      output = await this._call(args, run, toolCall ? { ...config, toolCall } : config)
    } catch (error) {
      await run?.handleToolError(error)
      throw error
    }
    await run?.handleToolEnd(output)
    return output as ToolReturnType<TArg, TConfig, DoguToolOutput>
  }

  protected _call(args: unknown, _run: CallbackManagerForToolRun | undefined, config: ToolRunnableConfig = {}): Promise<DoguToolOutput> {
    return this.runner(args, config)
  }
}

function isToolCall(value: unknown): value is ToolCall {
  return !!value && typeof value === 'object' && (value as { type?: unknown }).type === 'tool_call'
}
