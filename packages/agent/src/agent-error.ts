import { codedError } from '@dogu/core'
import type { ChatMessage } from './providers/openai-chat'

/**
 * Why `runAgent` stopped without an answer: a developer's mistake (`INVALID_OPTIONS`) or
 * the endpoint's failure. What the model does wrong (bad arguments, unknown tools) never
 * throws; it becomes a tool result the model reads.
 */
export class AgentError extends codedError('AgentError', {
  INVALID_OPTIONS: 'invalid options',
  HTTP: 'the endpoint answered with an error status',
  TIMEOUT: 'the endpoint did not answer in time',
  NETWORK: 'the endpoint could not be reached',
  BAD_RESPONSE: 'the endpoint sent a reply that is not a chat completion',
  ABORTED: 'the run was aborted',
}) {
  /** The HTTP status, for `HTTP`. */
  status?: number
  /**
   * The conversation up to the last complete turn, for `ABORTED` and endpoint failures:
   * every assistant message with tool calls is followed by their results, so it can be
   * sent again as it is.
   */
  messages?: ChatMessage[]
}

export namespace AgentError {
  export type Code = keyof typeof AgentError.Code
}
