import type { AskAnswer, AskScope, PermissionRequest } from '@dogu/core'
import type { ElicitRequestFormParams, ElicitResult } from '@modelcontextprotocol/sdk/types.js'

const CHOICES = ['once', 'session', 'always', 'deny'] as const
const SCOPES: ReadonlySet<string> = new Set<AskScope>(['once', 'session', 'always'])

/** The elicitation a permission request becomes: one required choice, `once` preselected. */
export function approvalForm(request: Readonly<PermissionRequest>): ElicitRequestFormParams {
  const once = request.confirm === 'always'
  return {
    mode: 'form',
    message: `Allow ${request.summary}? ${request.reason}`,
    requestedSchema: {
      type: 'object',
      properties: {
        decision: {
          type: 'string',
          title: 'Decision',
          description: once
            ? 'This tool asks every time: "once" allows this call, "deny" refuses it.'
            : '"once" allows this call, "session" every such call of this connection, "always" every such call from now on; "deny" refuses it.',
          enum: once ? ['once', 'deny'] : [...CHOICES],
          default: 'once',
        },
      },
      required: ['decision'],
    },
  }
}

/** The answer an elicitation result gives, from `by`: accept with a scope allows; anything else denies. */
export function answerOf(result: ElicitResult, by: AskAnswer['by']): AskAnswer {
  const decision = result.action === 'accept' ? result.content?.decision : undefined
  if (typeof decision === 'string' && SCOPES.has(decision)) return { decision: 'allow', scope: decision as AskScope, by }
  const reason = result.action === 'accept' ? 'denied in the MCP client' : `the MCP client ${result.action === 'cancel' ? 'dismissed' : 'declined'} the request`
  return { decision: 'deny', by, reason }
}
