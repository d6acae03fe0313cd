import type { AskAnswer, PermissionRequest } from '@dogu/core'
import type { ElicitRequestFormParams, ElicitResult } from '@modelcontextprotocol/sdk/types.js'
import { McpError } from './mcp-error'

/**
 * The MCP form a tool's `call.elicit` becomes (a request of `kind: 'elicitation'`): the
 * tool's message and its form as `requestedSchema`, as the engine made it (with defaults
 * and enum titles). Unlike an approval, nothing of Dogu's own is added.
 */
export function elicitationForm(request: Readonly<PermissionRequest>): ElicitRequestFormParams {
  const input = request.input
  if (!input?.requestedSchema) throw new McpError('CANNOT_ASK', `elicitation ${request.id} of ${request.tool} has no requestedSchema to send`)
  return {
    mode: 'form',
    message: input.message ?? request.reason,
    requestedSchema: input.requestedSchema as ElicitRequestFormParams['requestedSchema'],
  }
}

/**
 * The answer an MCP elicitation result gives to `call.elicit`: `accept` fills the form with
 * the client's content (which `respond` validates), `decline` is a no (`deny`), `cancel` a
 * dismissal (`deny` with `dismissed`), which the tool reads as `cancel`.
 */
export function elicitationAnswer(result: ElicitResult, by: AskAnswer['by']): AskAnswer {
  if (result.action === 'accept') return { decision: 'allow', value: result.content ?? {}, by, via: 'mcp' }
  if (result.action === 'decline') return { decision: 'deny', by, via: 'mcp', reason: 'declined in the MCP client' }
  return { decision: 'deny', dismissed: true, by, via: 'mcp', reason: 'dismissed in the MCP client' }
}
