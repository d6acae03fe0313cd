import { createRequire } from 'node:module'
import type * as Messages from '@langchain/core/messages'
import type * as Outputs from '@langchain/core/outputs'
import type { StructuredTool } from '@langchain/core/tools'
import { type Context, Schema } from 'koishi'
import type * as Api from 'koishi-plugin-chatluna/llm-core/platform/api'
import type * as Client from 'koishi-plugin-chatluna/llm-core/platform/client'
import type * as PlatformConfig from 'koishi-plugin-chatluna/llm-core/platform/config'
import type * as Model from 'koishi-plugin-chatluna/llm-core/platform/model'
import type * as Types from 'koishi-plugin-chatluna/llm-core/platform/types'
import type * as Chat from 'koishi-plugin-chatluna/services/chat'
import type * as Errors from 'koishi-plugin-chatluna/utils/error'

// ChatLuna's classes and LangChain as ChatLuna loads them (CommonJS, through require): an
// adapter must extend the very classes ChatLuna checks with instanceof, and build messages
// of the LangChain copy it runs with.
const require = createRequire(import.meta.url)
const { ChatLunaPlugin } = require('koishi-plugin-chatluna/services/chat') as typeof Chat
const { PlatformModelClient } = require('koishi-plugin-chatluna/llm-core/platform/client') as typeof Client
const { ChatLunaChatModel } = require('koishi-plugin-chatluna/llm-core/platform/model') as typeof Model
const { ModelRequester } = require('koishi-plugin-chatluna/llm-core/platform/api') as typeof Api
const { ModelCapabilities, ModelType } = require('koishi-plugin-chatluna/llm-core/platform/types') as typeof Types
const { ChatLunaError, ChatLunaErrorCode } = require('koishi-plugin-chatluna/utils/error') as typeof Errors
const { AIMessageChunk } = require('@langchain/core/messages') as typeof Messages
const { ChatGenerationChunk } = require('@langchain/core/outputs') as typeof Outputs
const { isInteropZodSchema } = require('@langchain/core/utils/types') as { isInteropZodSchema(value: unknown): boolean }

/**
 * A minimal OpenAI-compatible model adapter for koishi-plugin-chatluna 1.3.36, for tests:
 * the npm registry has no adapter that works with that version. Built as ChatLuna's own
 * adapters are (a `ChatLunaPlugin`, a `PlatformModelClient`, a `ModelRequester` behind a
 * `ChatLunaChatModel`), for one tool-calling model at `endpoint`.
 *
 * Limits: chat completions only, not streamed (`stream: false`, one chunk per reply); tools
 * with a JSON Schema only (as Dogu's bridge gives them; a zod schema is refused); no
 * embeddings, no model list from the server, no images; tokens are estimated (4 characters
 * a token), so ChatLuna never downloads a tiktoken table.
 */
export const name = 'chatluna-test-adapter'
export const inject = ['chatluna']

export interface AdapterConfig extends Chat.ChatLunaPlugin.Config {
  /** ChatLuna's platform name: models are `<platform>/<model>`. */
  platform: string
  /** The API base, up to and without `/chat/completions`. */
  endpoint: string
  model: string
}

/** What a test gives: the endpoint, and whatever it changes of the rest. */
export type AdapterOptions = Partial<AdapterConfig> & Pick<AdapterConfig, 'endpoint'>

export const Config: Schema<AdapterOptions, AdapterConfig> = Schema.intersect([
  ChatLunaPlugin.Config,
  Schema.object({
    platform: Schema.string().default('scripted'),
    endpoint: Schema.string().required(),
    model: Schema.string().default('scripted-model'),
  }),
]) as Schema<AdapterOptions, AdapterConfig>

export function apply(ctx: Context, config: AdapterConfig) {
  // As ChatLuna's adapters do: the plugin installs itself into ChatLuna once the app is ready.
  ctx.on('ready', async () => {
    const plugin = new ChatLunaPlugin<PlatformConfig.ClientConfig, AdapterConfig>(ctx, config, config.platform)
    plugin.parseConfig((config) => [{
      apiKey: 'test',
      apiEndpoint: config.endpoint,
      platform: config.platform,
      chatLimit: config.chatTimeLimit!,
      timeout: config.timeout!,
      maxRetries: config.maxRetries,
      concurrentMaxSize: config.chatConcurrentMaxSize!,
    }])
    plugin.registerClient(() => new TestClient(ctx, config, plugin))
    await plugin.initClient()
  })
}

class TestClient extends PlatformModelClient {
  platform: string
  private requester: TestRequester

  // Not `config`: BasePlatformClient's getter of that name is the platform's ClientConfig.
  constructor(ctx: Context, private settings: AdapterConfig, plugin: Chat.ChatLunaPlugin<PlatformConfig.ClientConfig, AdapterConfig>) {
    super(ctx, plugin.platformConfigPool)
    this.platform = settings.platform
    this.requester = new TestRequester(ctx, plugin.platformConfigPool, settings, plugin)
  }

  async refreshModels(): Promise<Types.ModelInfo[]> {
    return [{ name: this.settings.model, type: ModelType.llm, capabilities: [ModelCapabilities.ToolCall], maxTokens: 128_000 }]
  }

  protected _createModel(model: string): Model.ChatLunaChatModel {
    const info = this._modelInfos[model]
    if (!info) throw new ChatLunaError(ChatLunaErrorCode.MODEL_NOT_FOUND, new Error(`no model ${model}`))
    return new OfflineChatModel({
      modelInfo: info,
      requester: this.requester,
      model,
      modelMaxContextSize: info.maxTokens,
      maxTokenLimit: info.maxTokens / 2,
      timeout: this.settings.timeout,
      maxRetries: this.settings.maxRetries,
      llmType: 'openai',
    })
  }
}

/** ChatLuna's model, counting tokens without a tiktoken table (which it would download). */
class OfflineChatModel extends ChatLunaChatModel {
  override async getNumTokens(text: string): Promise<number> {
    return Math.ceil(text.length / 4)
  }
}

class TestRequester extends ModelRequester<PlatformConfig.ClientConfig, AdapterConfig> {
  get logger() {
    return this.ctx.logger(name)
  }

  protected async *completionStreamInternal(params: Api.ModelRequestParams): AsyncGenerator<Outputs.ChatGenerationChunk> {
    const tools = params.tools?.length ? params.tools.map(openAITool) : undefined
    const response = await this.post('chat/completions', {
      model: params.model,
      messages: params.input.map(openAIMessage),
      tools,
      stream: false,
    }, { signal: params.signal })
    const text = await response.text()
    if (!response.ok) throw new ChatLunaError(ChatLunaErrorCode.API_REQUEST_FAILED, new Error(`${response.status}: ${text}`))
    const message = JSON.parse(text).choices?.[0]?.message as OpenAIReply | undefined
    if (!message) throw new ChatLunaError(ChatLunaErrorCode.API_REQUEST_FAILED, new Error(`no choice in ${text}`))
    const content = message.content ?? ''
    yield new ChatGenerationChunk({
      text: content,
      message: new AIMessageChunk({
        content,
        tool_call_chunks: (message.tool_calls ?? []).map((call, index) => ({ index, id: call.id, name: call.function.name, args: call.function.arguments })),
      }),
    })
  }
}

interface OpenAIReply {
  content: string | null
  tool_calls?: { id: string; function: { name: string; arguments: string } }[]
}

/**
 * A tool as ChatLuna's OpenAI adapters send it (@chatluna/v1-shared-adapter's
 * formatToolToOpenAITool): its JSON Schema, with `$schema` and `additionalProperties`
 * deleted and `const` turned into `enum`, in place, on the object the tool handed out.
 */
function openAITool(tool: StructuredTool) {
  if (isInteropZodSchema(tool.schema)) throw new ChatLunaError(ChatLunaErrorCode.UNKNOWN_ERROR, new Error(`the test adapter sends JSON Schema tools only, and ${tool.name} has a zod schema`))
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: stripForProviders(tool.schema) } }
}

function stripForProviders(schema: unknown): unknown {
  const stack = [schema]
  while (stack.length) {
    const node = stack.pop()
    if (!node || typeof node !== 'object') continue
    const record = node as Record<string, unknown>
    delete record.additionalProperties
    delete record.$schema
    if ('const' in record) {
      record.enum ??= [record.const]
      delete record.const
    }
    stack.push(...Object.values(record))
  }
  return schema
}

function openAIMessage(message: Messages.BaseMessage) {
  const content = message.content
  switch (message.getType()) {
    case 'system':
      return { role: 'system', content }
    case 'human':
      return { role: 'user', content }
    case 'tool':
      return { role: 'tool', tool_call_id: (message as Messages.ToolMessage).tool_call_id, content }
    case 'ai': {
      const calls = (message as Messages.AIMessage).tool_calls ?? []
      return {
        role: 'assistant',
        // "" rather than null next to tool calls: some OpenAI-compatible servers refuse null.
        content: content ?? '',
        ...calls.length ? { tool_calls: calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } })) } : {},
      }
    }
    default:
      throw new ChatLunaError(ChatLunaErrorCode.UNKNOWN_ERROR, new Error(`the test adapter cannot send a ${message.getType()} message`))
  }
}
