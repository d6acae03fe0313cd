// The package's contract: each name below is one users may rely on.
export { AgentError } from './agent-error'
export type { AgentEvent } from './agent-event'
export type { Endpoint, FetchLike, RetryOptions } from './endpoint'
export {
  ANTHROPIC_IMAGE_TYPES,
  type AnthropicAssistantMessage,
  type AnthropicContentBlock,
  AnthropicStreamAccumulator,
  type AnthropicStreamEvent,
  type AnthropicToolResultBlock,
  type AnthropicToolResultMessage,
  type AnthropicUsage,
  parseAnthropicToolCalls,
  toAnthropicToolResults,
} from './providers/anthropic-messages'
export {
  GEMINI_IMAGE_TYPES,
  GEMINI_LOCAL_ID_PREFIX,
  type GeminiFunctionResponseContent,
  type GeminiFunctionResponsePart,
  type GeminiPart,
  type GeminiPartialArg,
  type GeminiResponse,
  GeminiStreamAccumulator,
  parseGeminiToolCalls,
  toGeminiFunctionResponses,
} from './providers/gemini'
export {
  chatAssistantMessage,
  ChatCompletionAccumulator,
  type ChatCompletionChunk,
  type ChatContentPart,
  type ChatMessage,
  type ChatReplyMessage,
  type ChatToolCall,
  type ChatUsage,
  parseChatToolCalls,
  toChatToolMessages,
} from './providers/openai-chat'
export {
  parseResponsesToolCalls,
  type ResponsesFunctionCallOutput,
  type ResponsesOutputItem,
  type ResponsesStreamEvent,
  ResponsesStreamAccumulator,
  toResponsesToolOutputs,
} from './providers/openai-responses'
export { ERROR_STATUSES, imageNote, isErrorResult, resultText } from './providers/result-text'
export { type AgentResult, type AgentUsage, runAgent, type RunAgentOptions } from './run-agent'
export { NOTICE_PREFIX, noticeText, type SettledSubscription, TaskNotices, type TaskNoticesOptions } from './task-notices'
export { type CutOffTextToolCall, type ExtractedTextToolCalls, type ExtractTextToolCallsOptions, extractTextToolCalls, TEXT_TOOL_CALL_FORMATS, type TextToolCall, type TextToolCallFormat, type TextToolSchema } from './text-tool-calls'
export { type Script, type ScriptedApi, type ScriptedReply, type ScriptedRequest, type ScriptedServer, type ScriptedServerOptions, startScriptedServer } from './scripted-server'
