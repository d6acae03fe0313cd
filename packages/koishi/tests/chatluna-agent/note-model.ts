import type { ChatMessage, ScriptedReply, ScriptedRequest } from '@dogu/agent'

/** What the model is asked to note: `note: <text>` in a user message. */
const NOTE = /\bnote:\s*(.+?)\s*$/m

/**
 * The scripted model of the ChatLuna agent test, decided by what each request holds and
 * never by how many came before (ChatLuna adds system messages of its own, even after the
 * tool results, and may ask the model other things):
 *
 * - a tool result after the user's `note: <text>`: the final answer, quoting the result;
 * - `save_note` offered and a user message saying `note: <text>`: a call of `save_note`;
 * - anything else: a plain answer that calls nothing.
 */
export function noteModel(request: ScriptedRequest): ScriptedReply {
  const messages = request.body.messages ?? []
  const asked = messages.findLastIndex((message) => message.role === 'user' && NOTE.test(textOf(message)))
  const result = messages.slice(asked + 1).findLast((message) => message.role === 'tool')
  if (asked >= 0 && result) return { text: `Final answer. The tool said: ${textOf(result)}` }
  const offered = request.body.tools?.some((tool) => tool.function.name === 'save_note')
  if (asked >= 0 && offered) {
    const text = NOTE.exec(textOf(messages[asked]))![1]
    return { toolCalls: [{ id: `call_${messages.length}`, name: 'save_note', arguments: JSON.stringify({ text }) }] }
  }
  return { text: 'I only take notes.' }
}

/** A message's text, its parts joined when it has parts. */
function textOf(message: ChatMessage): string {
  const { content } = message
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content.map((part) => (part.type === 'text' ? part.text : '')).join('')
}
