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

/** The ways `sloppyDemoModel` breaks its calls, in turn: what open models send, and the repair mends. */
export const SLOPPY_WAYS = Object.freeze(['trailing-comma', 'quotes', 'full-width', 'fence', 'text-call'] as const)

export type SloppyWay = typeof SLOPPY_WAYS[number]

/**
 * The demo's scripted model: a user message gets one tool call chosen by keywords (notes,
 * files, the shell, a typo, else `lookup`); tool results get a short summary. Streams its
 * text in small pieces, as a real model would.
 */
export function demoModel(request: ScriptedRequest): ScriptedReply {
  return reply(request, (text, name, args, id) => ({ text, toolCalls: [{ id, name, arguments: JSON.stringify(args) }], pieceSize: 5 }))
}

/**
 * The demo model of `yarn demo --sloppy`: the same calls, sent broken the way open models
 * break them (see `SLOPPY_WAYS`), one way per user message in turn: a trailing comma, single
 * quotes, full-width punctuation, a Markdown fence, and a Hermes `<tool_call>` written into
 * the text with no structured call (its arguments with a trailing comma). The agent loop reads
 * the last as a call; the pipeline repairs each, and the playground says so.
 */
export function sloppyDemoModel(request: ScriptedRequest): ScriptedReply {
  const turn = (request.body.messages ?? []).filter((message) => message.role === 'user').length - 1
  const way = SLOPPY_WAYS[Math.max(0, turn) % SLOPPY_WAYS.length]
  return reply(request, (text, name, args, id) => {
    // Written into the text, as a server without a parser for the model's format passes it on; its arguments broken too.
    if (way === 'text-call') return { text: `${text}\n<tool_call>\n{"name": ${JSON.stringify(name)}, "arguments": ${BREAK['trailing-comma'](JSON.stringify(args))}}\n</tool_call>`, pieceSize: 5 }
    return { text, toolCalls: [{ id, name, arguments: BREAK[way](JSON.stringify(args)) }], pieceSize: 5 }
  })
}

const BREAK: Readonly<Record<Exclude<SloppyWay, 'text-call'>, (json: string) => string>> = Object.freeze({
  'trailing-comma': (json) => json.replace(/\}$/, ',}'),
  quotes: singleQuoted,
  'full-width': (json) => json.replace(STRINGS_OR_PUNCTUATION, (token) => FULL_WIDTH[token] ?? token),
  fence: (json) => `\`\`\`json\n${json}\n\`\`\``,
})

/** A JSON string token, or `,` / `:` between them: so punctuation inside strings stays as it is. */
const STRINGS_OR_PUNCTUATION = /"(?:[^"\\]|\\.)*"|[,:]/g
const FULL_WIDTH: Readonly<Record<string, string>> = Object.freeze({ ',': '，', ':': '：' })

/** Compact JSON with Python's quotes: each string in `'…'`, its own `'` escaped and its `\"` plain. */
function singleQuoted(json: string): string {
  return json.replace(/"((?:[^"\\]|\\.)*)"/g, (_, body: string) => `'${body.replace(/\\"/g, '"').replace(/'/g, "\\'")}'`)
}

type Call = (text: string, name: string, args: Record<string, unknown>, id: string) => ScriptedReply

function reply(request: ScriptedRequest, call: Call): ScriptedReply {
  const messages = request.body.messages ?? []
  const last = messages.at(-1)
  if (last?.role === 'tool') {
    const results = messages.slice(messages.findLastIndex((message) => message.role === 'assistant') + 1)
    const lines = results.map((message) => firstLine(String(message.content)).slice(0, 200))
    return { text: `Done. The tool said: ${lines.join(' / ')}`, pieceSize: 4 }
  }
  const text = typeof last?.content === 'string' ? last.content.trim() : ''
  if (/^(hi|hello|你好)\b/i.test(text) || !text) {
    return { text: 'Hello! I am the demo model. Try: "capital of Japan", "note buy milk", "write a file", "list files", "run a shell command" or "make a typo".', pieceSize: 6 }
  }
  const rule = RULES.find((candidate) => candidate.test.test(text))
  const { say, name, args } = (rule?.reply ?? LOOKUP)(text)
  return call(say, name, args, `call_demo_${messages.length}`)
}

/** A result's first line, after the note Dogu puts first when it repaired the arguments (it is for the model to read). */
function firstLine(content: string): string {
  const body = /^Note: [^\n]*\n\n/.test(content) ? content.slice(content.indexOf('\n\n') + 2) : content
  return body.split('\n', 1)[0]
}
