import type { ModelMessage } from 'ai'
import type { Rejection } from './tool-adapters'

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

/**
 * The calls the user rejected in the approval responses a request brings: the last tool
 * message that holds approval responses, when no assistant message follows it (a later turn's
 * history holds older ones), each call once, less those that already have a result — the
 * ones the SDK answers with `execution-denied` without calling the tool.
 */
export function rejectionsIn(messages: readonly ModelMessage[]): Rejection[] {
  let at = messages.length - 1
  while (at >= 0 && messages[at]!.role !== 'assistant' && !hasResponses(messages[at]!)) at--
  const answered = messages[at]
  if (at < 0 || answered?.role !== 'tool' || !Array.isArray(answered.content)) return []
  const requests = new Map<string, string>()
  const calls = new Map<string, { toolName: string; input: unknown }>()
  for (const message of messages) {
    if (message.role !== 'assistant' || !Array.isArray(message.content)) continue
    for (const part of message.content) {
      if (part.type === 'tool-approval-request') requests.set(part.approvalId, part.toolCallId)
      else if (part.type === 'tool-call') calls.set(part.toolCallId, { toolName: part.toolName, input: part.input })
    }
  }
  const results = new Set(answered.content.flatMap((part) => part.type === 'tool-result' ? [part.toolCallId] : []))
  const seen = new Set<string>()
  const rejections: Rejection[] = []
  for (const part of answered.content) {
    if (part.type !== 'tool-approval-response') continue
    const toolCallId = requests.get(part.approvalId)
    const call = toolCallId === undefined ? undefined : calls.get(toolCallId)
    if (!call || results.has(toolCallId!) || seen.has(toolCallId!)) continue
    seen.add(toolCallId!)
    if (part.approved === true) continue
    const rejection: Rejection = { approvalId: part.approvalId, toolCallId: toolCallId!, toolName: call.toolName, input: call.input }
    if (typeof part.reason === 'string') rejection.reason = part.reason
    rejections.push(rejection)
  }
  return rejections
}

function hasResponses(message: ModelMessage): boolean {
  return message.role === 'tool' && Array.isArray(message.content) && message.content.some((part) => part.type === 'tool-approval-response')
}
