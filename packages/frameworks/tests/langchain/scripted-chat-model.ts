import { BaseChatModel } from '@langchain/core/language_models/chat_models'
import { AIMessage, type BaseMessage, type ToolCall } from '@langchain/core/messages'
import type { ChatResult } from '@langchain/core/outputs'
import type { StructuredToolInterface } from '@langchain/core/tools'
import { convertToOpenAITool } from '@langchain/core/utils/function_calling'

/** One turn of the script: the tool calls the model makes (an empty list ends the run with `text`). */
export interface Turn {
  calls?: Omit<ToolCall, 'type'>[]
  text?: string
}

/**
 * A chat model that plays a script, one turn per call, and keeps every prompt it was sent:
 * what the model would read of the tools' results. `bindTools` keeps the definitions as an
 * OpenAI-style provider would receive them.
 */
export class ScriptedChatModel extends BaseChatModel {
  readonly prompts: BaseMessage[][] = []
  definitions: unknown[] = []

  constructor(private readonly turns: Turn[]) {
    super({})
  }

  _llmType(): string {
    return 'scripted'
  }

  override bindTools(tools: StructuredToolInterface[]) {
    this.definitions = tools.map((tool) => convertToOpenAITool(tool))
    return this
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.prompts.push([...messages])
    const turn = this.turns[this.prompts.length - 1]
    if (!turn) throw new Error(`the script has ${this.turns.length} turns; the model was called a ${this.prompts.length}th time`)
    const message = new AIMessage({ content: turn.text ?? '', tool_calls: (turn.calls ?? []).map((call) => ({ ...call, type: 'tool_call' as const })) })
    return { generations: [{ message, text: turn.text ?? '' }] }
  }

  /** The last prompt's tool messages, by tool call id: what the model read of each call. */
  toolResults(): Map<string, { content: unknown; status?: string }> {
    const results = new Map<string, { content: unknown; status?: string }>()
    for (const message of this.prompts.at(-1) ?? []) {
      if (message.getType() === 'tool') {
        const tool = message as BaseMessage & { tool_call_id: string; status?: string }
        results.set(tool.tool_call_id, { content: tool.content, status: tool.status })
      }
    }
    return results
  }
}
