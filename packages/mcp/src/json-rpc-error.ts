import { ErrorCode } from '@modelcontextprotocol/sdk/types.js'

/**
 * An error a request handler throws to answer with a JSON-RPC error: the SDK sends its
 * `code` and its `message` as they are (the SDK's own `McpError` prefixes the message with
 * `MCP error <code>:`, which the client's error then repeats).
 */
export class JsonRpcError extends Error {
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(message)
    this.name = 'JsonRpcError'
  }
}

/** `-32602`: what the specification answers a `tools/call` of a tool the server does not have. */
export function invalidParams(message: string): JsonRpcError {
  return new JsonRpcError(ErrorCode.InvalidParams, message)
}
