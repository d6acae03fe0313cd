// The adapters' shapes, checked against the providers' own SDK types (dev dependencies
// only): what we send must be assignable to the SDK's request types, and the SDK's reply
// and stream types must be readable by our parsers.
import type Anthropic from '@anthropic-ai/sdk'
import type { AnthropicToolDefinition } from '@dogu/core'
import type { Content, FunctionCall, GenerateContentResponse, Part, PartialArg } from '@google/genai'
import type {
  ChatCompletionChunk as SdkChunk,
  ChatCompletionMessage,
  ChatCompletionMessageParam,
  ChatCompletionToolMessageParam,
} from 'openai/resources/chat/completions'
import type { ResponseInputItem, ResponseOutputItem, ResponseStreamEvent } from 'openai/resources/responses/responses'
import { describe, expectTypeOf, it } from 'vitest'
import {
  type AnthropicContentBlock,
  type AnthropicStreamEvent,
  type ChatCompletionChunk,
  type ChatMessage,
  type ChatReplyMessage,
  type GeminiPart,
  type GeminiPartialArg,
  type GeminiResponse,
  parseAnthropicToolCalls,
  parseGeminiToolCalls,
  parseResponsesToolCalls,
  type ResponsesOutputItem,
  type ResponsesStreamEvent,
  toAnthropicToolResults,
  toChatToolMessages,
  toGeminiFunctionResponses,
  toResponsesToolOutputs,
} from '../src'

describe('OpenAI Chat Completions (openai)', () => {
  it('sends messages the SDK accepts', () => {
    expectTypeOf<ChatMessage>().toExtend<ChatCompletionMessageParam>()
    expectTypeOf(toChatToolMessages).returns.toExtend<ChatCompletionMessageParam[]>()
    expectTypeOf<Extract<ChatMessage, { role: 'tool' }>>().toExtend<ChatCompletionToolMessageParam>()
  })
  it('reads the SDK\'s replies and chunks', () => {
    expectTypeOf<ChatCompletionMessage>().toExtend<ChatReplyMessage>()
    expectTypeOf<SdkChunk>().toExtend<ChatCompletionChunk>()
  })
})

describe('OpenAI Responses (openai)', () => {
  it('sends function_call_output items the SDK accepts, and reads its output and events', () => {
    expectTypeOf(toResponsesToolOutputs).returns.toExtend<ResponseInputItem[]>()
    expectTypeOf(toResponsesToolOutputs).returns.toExtend<ResponseInputItem.FunctionCallOutput[]>()
    const item = (output: ResponseOutputItem): ResponsesOutputItem => output
    expectTypeOf(item).toBeFunction()
    const read = (event: ResponseStreamEvent): ResponsesStreamEvent => event
    expectTypeOf(read).toBeFunction()
    expectTypeOf(parseResponsesToolCalls).parameter(0).toExtend<readonly ResponsesOutputItem[]>()
  })
})

describe('Anthropic Messages (@anthropic-ai/sdk)', () => {
  it('sends a tool_result user message the SDK accepts, and reads its blocks and events', () => {
    expectTypeOf(toAnthropicToolResults).returns.toExtend<Anthropic.MessageParam>()
    expectTypeOf<ReturnType<typeof toAnthropicToolResults>['content'][number]>().toExtend<Anthropic.ToolResultBlockParam>()
    expectTypeOf<Anthropic.ContentBlock>().toExtend<AnthropicContentBlock>()
    expectTypeOf<Anthropic.RawMessageStreamEvent>().toExtend<AnthropicStreamEvent>()
    expectTypeOf<Anthropic.ContentBlock[]>().toExtend<Parameters<typeof parseAnthropicToolCalls>[0]>()
  })

  it('reads thinking blocks and their deltas as the SDK types them', () => {
    expectTypeOf<Anthropic.ThinkingBlock>().toExtend<AnthropicContentBlock>()
    expectTypeOf<Anthropic.RedactedThinkingBlock>().toExtend<AnthropicContentBlock>()
    expectTypeOf<Anthropic.ThinkingDelta>().toExtend<NonNullable<AnthropicStreamEvent['delta']>>()
    expectTypeOf<Anthropic.SignatureDelta>().toExtend<NonNullable<AnthropicStreamEvent['delta']>>()
  })

  it('has tool definitions the SDK takes as tools, without a cast', () => {
    // toolset.definitions('anthropic') goes straight into messages.create({ tools })
    expectTypeOf<AnthropicToolDefinition>().toExtend<Anthropic.Tool>()
    expectTypeOf<AnthropicToolDefinition[]>().toExtend<Anthropic.ToolUnion[]>()
  })
})

describe('Gemini (@google/genai)', () => {
  it('sends function responses the SDK accepts, and reads its replies', () => {
    expectTypeOf(toGeminiFunctionResponses).returns.toExtend<Content>()
    expectTypeOf<ReturnType<typeof toGeminiFunctionResponses>['parts'][number]>().toExtend<Part>()
    const reply = (response: GenerateContentResponse): GeminiResponse => response
    const parts = (list: Part[]) => parseGeminiToolCalls(list)
    expectTypeOf(reply).toBeFunction()
    expectTypeOf(parts).returns.toBeArray()
  })

  it('reads streamed function call arguments as the SDK types them', () => {
    expectTypeOf<PartialArg>().toExtend<GeminiPartialArg>()
    expectTypeOf<FunctionCall>().toExtend<NonNullable<GeminiPart['functionCall']>>()
  })
})
