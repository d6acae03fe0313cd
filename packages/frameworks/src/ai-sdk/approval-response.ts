import type { ModelMessage } from 'ai'

/** The user's answer to the approval request of one tool call, as the AI SDK carries it. */
export interface ApprovalResponse {
  approvalId: string
  approved: boolean
  reason?: string
}

/**
 * The approval response the AI SDK acts on for `toolCallId`: an assistant message's
 * `tool-approval-request` part links its `approvalId` to the call, and the last message (a
 * tool message) holds the `tool-approval-response` with that id. Only the last message, and
 * only the first response for the call, as the SDK itself collects them: an older answer in
 * the history is never taken for a new one.
 */
export function approvalResponseFor(messages: readonly ModelMessage[] | undefined, toolCallId: string): ApprovalResponse | undefined {
  const last = messages?.at(-1)
  if (last?.role !== 'tool' || !Array.isArray(last.content)) return undefined
  const approvalIds = new Set<string>()
  for (const message of messages!) {
    if (message.role !== 'assistant' || !Array.isArray(message.content)) continue
    for (const part of message.content) {
      if (part.type === 'tool-approval-request' && part.toolCallId === toolCallId) approvalIds.add(part.approvalId)
    }
  }
  if (!approvalIds.size) return undefined
  for (const part of last.content) {
    if (part.type !== 'tool-approval-response' || !approvalIds.has(part.approvalId)) continue
    const response: ApprovalResponse = { approvalId: part.approvalId, approved: part.approved === true }
    if (typeof part.reason === 'string') response.reason = part.reason
    return response
  }
  return undefined
}
