import type { ScriptedReply, ScriptedRequest } from '@dogu/agent'

interface Rule {
  test: RegExp
  reply(text: string): { say: string; name: string; args: Record<string, unknown> }
}

// What the demo "model" does with a message: a fixed table, so `yarn demo` needs no network
// and no key, yet shows reads, writes that ask, the shell, and a bad call.
const RULES: Rule[] = [
  {
    test: /\bnote\b|笔记|记/i,
    reply: (text) => ({ say: 'I will add that as a note.', name: 'notes', args: { action: 'add', text: text.replace(/^.*?\bnote\b:?\s*/i, '') || text } }),
  },
  {
    test: /\bfile\b|\bwrite\b|文件/i,
    reply: (text) => ({ say: 'I will write it to a file in the workspace.', name: 'write', args: { path: 'hello.txt', content: `${text}\n` } }),
  },
  {
    test: /\bfiles\b|\bls\b|\blist\b|目录/i,
    reply: () => ({ say: 'Let me list the workspace.', name: 'list', args: { path: '.' } }),
  },
  {
    test: /\bshell\b|\brun\b|\bbash\b|命令/i,
    reply: () => ({ say: 'I will run a command.', name: 'bash', args: { command: 'echo "hello from $(basename "$PWD")" && date -u +%Y' } }),
  },
  {
    test: /\btypo\b|\bmistake\b/i,
    reply: () => ({ say: 'Calling a tool by a wrong name, to show what happens.', name: 'lokup', args: { q: 'France' } }),
  },
]

/** The tool-less fallback: look the words up as a country. */
const LOOKUP: Rule['reply'] = (text) => ({ say: 'Let me look that up.', name: 'lookup', args: { q: text.split(/\s+/).filter(Boolean).at(-1)?.replace(/[?？!.。]+$/, '') ?? text } })

/**
 * The demo's scripted model: a user message gets one tool call chosen by keywords (notes,
 * files, the shell, a typo, else `lookup`); tool results get a short summary. Streams its
 * text in small pieces, as a real model would.
 */
export function demoModel(request: ScriptedRequest): ScriptedReply {
  const messages = request.body.messages ?? []
  const last = messages.at(-1)
  if (last?.role === 'tool') {
    const results = messages.slice(messages.findLastIndex((message) => message.role === 'assistant') + 1)
    const lines = results.map((message) => String(message.content).split('\n', 1)[0].slice(0, 200))
    return { text: `Done. The tool said: ${lines.join(' / ')}`, pieceSize: 4 }
  }
  const text = typeof last?.content === 'string' ? last.content.trim() : ''
  if (/^(hi|hello|你好)\b/i.test(text) || !text) {
    return { text: 'Hello! I am the demo model. Try: "capital of Japan", "note buy milk", "write a file", "list files", "run a shell command" or "make a typo".', pieceSize: 6 }
  }
  const rule = RULES.find((candidate) => candidate.test.test(text))
  const { say, name, args } = (rule?.reply ?? LOOKUP)(text)
  return { text: say, toolCalls: [{ id: `call_demo_${messages.length}`, name, arguments: JSON.stringify(args) }], pieceSize: 5 }
}
