import type { AskAnswer, AskScope, PermissionRequest, ToolPreview } from '@dogu/core'
import type { ElicitRequestFormParams, ElicitResult } from '@modelcontextprotocol/sdk/types.js'

const CHOICES = ['once', 'session', 'always', 'deny'] as const
const SCOPES: ReadonlySet<string> = new Set<AskScope>(['once', 'session', 'always'])

/** The elicitation a permission request becomes: one required choice, `once` preselected. */
export function approvalForm(request: Readonly<PermissionRequest>): ElicitRequestFormParams {
  const once = request.confirm === 'always'
  return {
    mode: 'form',
    message: `Allow ${request.summary}? ${request.reason}${request.preview ? `\n\n${previewText(request.preview)}` : ''}`,
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

/** The most lines of a preview an elicitation message carries. */
export const MESSAGE_PREVIEW_LINES = 60
/** The most characters of a preview an elicitation message carries. */
export const MESSAGE_PREVIEW_CHARS = 4000

/**
 * A preview as the elicitation message carries it: the command (`$ …`) and URL first, then
 * the text and the diff, bounded to `MESSAGE_PREVIEW_LINES` lines and
 * `MESSAGE_PREVIEW_CHARS` characters, with a last line saying how much was left out.
 */
export function previewText(preview: Readonly<ToolPreview>): string {
  const lines: string[] = []
  if (preview.command) lines.push(`$ ${preview.command}`)
  if (preview.url) lines.push(`URL: ${preview.url}`)
  if (preview.text) lines.push(...preview.text.replace(/\n$/, '').split('\n'))
  if (preview.diff) lines.push(...preview.diff.replace(/\n$/, '').split('\n'))
  const kept: string[] = []
  let chars = 0
  for (const line of lines) {
    if (kept.length === MESSAGE_PREVIEW_LINES) break
    if (chars + line.length > MESSAGE_PREVIEW_CHARS) {
      // A line that does not fit: its head, when nothing else would be shown.
      if (!kept.length) kept.push(line.slice(0, MESSAGE_PREVIEW_CHARS))
      break
    }
    kept.push(line)
    chars += line.length + 1
  }
  const shown = kept.join('\n')
  const whole = lines.join('\n')
  if (shown.length === whole.length) return shown
  const leftLines = lines.length - kept.length
  const leftChars = whole.length - shown.length
  const lineCount = leftLines ? `${leftLines} more line${leftLines === 1 ? '' : 's'}, ` : ''
  return `${shown}\n… ${lineCount}${leftChars} more characters of the preview not shown`
}

/** The answer an elicitation result gives, from `by`: accept with a scope allows; anything else denies. */
export function answerOf(result: ElicitResult, by: AskAnswer['by']): AskAnswer {
  const decision = result.action === 'accept' ? result.content?.decision : undefined
  if (typeof decision === 'string' && SCOPES.has(decision)) return { decision: 'allow', scope: decision as AskScope, by, via: 'mcp' }
  const reason = result.action === 'accept' ? 'denied in the MCP client' : `the MCP client ${result.action === 'cancel' ? 'dismissed' : 'declined'} the request`
  return { decision: 'deny', by, reason, via: 'mcp' }
}
