import { codedError } from '@dogu/schema'

/** A mistake in how `@dogu/mcp` is set up or used; what a model does wrong is a result, never this. */
export class McpError extends codedError('McpError', {
  INVALID_OPTIONS: 'invalid options or config',
  CLOSED: 'the server or client is closed',
  CANNOT_ASK: 'this asker cannot reach the request',
  UNSAFE_LISTEN: 'a non-loopback address needs a bearer token',
  NOT_CONNECTED: 'the MCP server is not connected',
  NEEDS_AUTHORIZATION: 'the MCP server needs OAuth authorization',
  INVALID_AUTHORIZATION: 'the authorization callback does not match one under way',
}) {}

export namespace McpError {
  export type Code = keyof typeof McpError.Code
}
