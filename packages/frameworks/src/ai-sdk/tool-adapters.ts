import type { ModelMessage } from 'ai'
import type { RawArguments } from './raw-arguments'

/** A rejected approval, as the AI SDK's messages hold it. */
export interface Rejection {
  approvalId: string
  toolCallId: string
  toolName: string
  input: unknown
  reason?: string
}

/** What the adapter behind a tool object offers the SDK's other hooks (`repairToolCall`, `auditRejections`). */
export interface ToolAdapter {
  readonly raw: RawArguments
  /** The user's no as Dogu's answer to the call: denied and audited, never run. Once per approval. */
  recordRejection(rejection: Rejection, context: { messages: ModelMessage[]; experimental_context: unknown }): Promise<void>
}

/** The adapter that made each tool object: how hooks given the SDK's `tools` find it. */
export const TOOL_ADAPTERS = new WeakMap<object, ToolAdapter>()
