import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { ChatMessage } from './providers/openai-chat'

/** One reply of the scripted model. */
export interface ScriptedReply {
  /** The assistant's text. */
  text?: string
  /** Tool calls; `arguments` is sent exactly as given (malformed JSON included). */
  toolCalls?: { id?: string; name: string; arguments: string }[]
  /** Streamed text and arguments go out in pieces of this many characters. @default whole */
  pieceSize?: number
  /** Each SSE event is written in writes of this many bytes (splits UTF-8 characters too). */
  byteSize?: number
  /** Answer with this status and `body` instead of a completion (429, 503, …). */
  status?: number
  headers?: Record<string, string>
  /** The error body for `status`. @default an OpenAI-style error object */
  body?: string
  /** Stream this many events, then stop writing and hold the connection until the client leaves. */
  stallAfter?: number
  /** Answer `finish_reason` (default `tool_calls` with calls, else `stop`). */
  finishReason?: string
  usage?: { prompt_tokens: number; completion_tokens: number }
}

/** What the server saw of one request. */
export interface ScriptedRequest {
  /** The raw body, byte for byte as sent. */
  raw: string
  body: { model?: string; messages?: ChatMessage[]; tools?: { function: { name: string } }[]; stream?: boolean; [key: string]: unknown }
  headers: IncomingMessage['headers']
  /** Why a real endpoint would refuse this request; the server answered 400 when any. */
  problems: string[]
}

/** Decides the reply to each request: a list is replayed in order; a function sees each request. */
export type Script = readonly ScriptedReply[] | ((request: ScriptedRequest, index: number) => ScriptedReply)

export interface ScriptedServerOptions {
  script: Script
  /** The model name it answers for; any name when unset. */
  model?: string
  /** Endpoint that cannot stream: `stream: true` gets a plain JSON reply (`json`) or a 400 naming `stream` (`refuse`). */
  noStream?: 'json' | 'refuse'
  /** @default 0 (any free port) */
  port?: number
}

export interface ScriptedServer {
  /** The base URL to give `runAgent`, ending in `/v1`. */
  baseURL: string
  /** Every request so far. */
  requests: ScriptedRequest[]
  /** Stops listening and closes open connections. A second call does nothing. */
  close(): Promise<void>
}

/**
 * An OpenAI-compatible chat completions server on loopback that replays a script: for
 * tests, benchmarks and `yarn demo`, with no network and no key. Like a strict real
 * endpoint it refuses requests with `content: null` next to tool calls, tool calls left
 * without results, results for unknown calls, arguments that are not a JSON object,
 * `tools: []` and `stream_options` without `stream`; each request records what it found.
 * Node only: `node:http` is loaded when the server starts.
 */
export async function startScriptedServer(options: ScriptedServerOptions): Promise<ScriptedServer> {
  const { createServer } = await import('node:http')
  const requests: ScriptedRequest[] = []
  let served = 0
  const open = new Set<ServerResponse>()
  const server: Server = createServer((req, res) => {
    open.add(res)
    res.on('close', () => open.delete(res))
    handle(req, res).catch((error) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { message: String(error), type: 'server_error' } }))
    })
  })

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const raw = Buffer.concat(chunks).toString('utf8')
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) return error(res, 404, `no route ${req.method} ${req.url}`)
    let body: ScriptedRequest['body']
    try {
      body = JSON.parse(raw)
    } catch {
      return error(res, 400, 'We could not parse the JSON body of your request.')
    }
    const request: ScriptedRequest = { raw, body, headers: req.headers, problems: refusals(body, options.model) }
    requests.push(request)
    if (request.problems.length) return error(res, 400, request.problems.join('; '))
    if (body.stream && options.noStream === 'refuse') return error(res, 400, 'stream is not supported by this endpoint')
    // The script's turns count the requests it answers, not the ones refused.
    const index = served++
    const script = options.script
    const reply = typeof script === 'function' ? script(request, index) : script[index]
    if (!reply) return error(res, 500, `the script has no reply for request #${index + 1}`)
    if (reply.status) {
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers })
      return void res.end(reply.body ?? JSON.stringify({ error: { message: `scripted ${reply.status}`, type: 'scripted' } }))
    }
    if (body.stream && options.noStream !== 'json') return stream(res, reply, body)
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify(whole(reply, body)))
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo
  let closing: Promise<void> | undefined
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const res of open) res.destroy()
        server.close(() => resolve())
        server.closeAllConnections()
      })
      return closing
    },
  }
}

function error(res: ServerResponse, status: number, message: string) {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ error: { message, type: 'invalid_request_error' } }))
}

const CREATED = 1_700_000_000

function whole(reply: ScriptedReply, body: ScriptedRequest['body']) {
  const calls = reply.toolCalls ?? []
  return {
    id: 'chatcmpl-scripted',
    object: 'chat.completion',
    created: CREATED,
    model: body.model,
    choices: [{
      index: 0,
      message: {
        role: 'assistant',
        content: reply.text ?? (calls.length ? null : ''),
        ...(calls.length ? { tool_calls: calls.map((call, i) => ({ id: call.id ?? `call_${i}`, type: 'function', function: { name: call.name, arguments: call.arguments } })) } : {}),
      },
      finish_reason: reply.finishReason ?? (calls.length ? 'tool_calls' : 'stop'),
    }],
    usage: usageOf(reply),
  }
}

function usageOf(reply: ScriptedReply) {
  const usage = reply.usage ?? { prompt_tokens: 10, completion_tokens: 5 }
  return { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens }
}

function pieces(text: string, size: number | undefined): string[] {
  if (!size || size <= 0 || text.length <= size) return [text]
  const list: string[] = []
  for (let i = 0; i < text.length; i += size) list.push(text.slice(i, i + size))
  return list
}

async function stream(res: ServerResponse, reply: ScriptedReply, body: ScriptedRequest['body']) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
  const base = { id: 'chatcmpl-scripted', object: 'chat.completion.chunk', created: CREATED, model: body.model }
  const events: unknown[] = [{ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }]
  for (const piece of reply.text ? pieces(reply.text, reply.pieceSize) : []) {
    events.push({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })
  }
  for (const [i, call] of (reply.toolCalls ?? []).entries()) {
    events.push({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: i, id: call.id ?? `call_${i}`, type: 'function', function: { name: call.name, arguments: '' } }] }, finish_reason: null }] })
    for (const piece of pieces(call.arguments, reply.pieceSize)) {
      if (piece) events.push({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: i, function: { arguments: piece } }] }, finish_reason: null }] })
    }
  }
  events.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: reply.finishReason ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop') }] })
  const options = body.stream_options as { include_usage?: boolean } | undefined
  if (options?.include_usage) events.push({ ...base, choices: [], usage: usageOf(reply) })
  const lines = [...events.map((event) => `data: ${JSON.stringify(event)}\n\n`), 'data: [DONE]\n\n']
  for (const [i, line] of lines.entries()) {
    if (reply.stallAfter !== undefined && i >= reply.stallAfter) {
      // Holds the connection open: the client's abort (or the server's close) ends it.
      return new Promise<void>((resolve) => res.on('close', resolve))
    }
    const bytes = Buffer.from(line, 'utf8')
    const size = reply.byteSize ?? bytes.length
    for (let at = 0; at < bytes.length; at += size) {
      if (res.destroyed) return
      res.write(bytes.subarray(at, at + size))
      // A separate write per piece only splits the bytes if each leaves before the next.
      if (reply.byteSize) await new Promise((resolve) => setImmediate(resolve))
    }
  }
  res.end()
}

/** What a strict OpenAI-compatible endpoint would refuse in this request body. */
export function refusals(body: ScriptedRequest['body'], model?: string): string[] {
  const problems: string[] = []
  if (!body || typeof body !== 'object') return ['the body is not a JSON object']
  if (typeof body.model !== 'string' || !body.model) problems.push('you must provide a model parameter')
  else if (model && body.model !== model) problems.push(`The model \`${body.model}\` does not exist`)
  if (body.stream_options !== undefined && body.stream !== true) problems.push('The \'stream_options\' parameter is only allowed when \'stream\' is enabled.')
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools) || !body.tools.length) problems.push('[] is too short - \'tools\'')
    else {
      const names = body.tools.map((tool) => tool?.function?.name)
      const duplicate = names.find((name, i) => names.indexOf(name) !== i)
      if (duplicate) problems.push(`tools: duplicate function name ${JSON.stringify(duplicate)}`)
    }
  }
  const messages = body.messages
  if (!Array.isArray(messages) || !messages.length) return [...problems, '[] is too short - \'messages\'']
  let waiting: Set<string> | undefined
  for (const [i, message] of messages.entries()) {
    if (message.role === 'tool') {
      if (!waiting?.has(message.tool_call_id)) problems.push(`messages[${i}]: a 'tool' message must answer a tool_call_id of the preceding assistant message ('${message.tool_call_id}' does not)`)
      else waiting.delete(message.tool_call_id)
      if (typeof message.content !== 'string' && !Array.isArray(message.content)) problems.push(`messages[${i}].content: must be a string`)
      continue
    }
    if (waiting?.size) problems.push(`An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...waiting].join(', ')}`)
    waiting = undefined
    if (message.role === 'assistant' && message.tool_calls?.length) {
      if (message.content === null) problems.push(`messages[${i}].content: null next to tool_calls (refused by some OpenAI-compatible servers; send "")`)
      waiting = new Set()
      for (const call of message.tool_calls) {
        waiting.add(call.id)
        try {
          const parsed = JSON.parse(call.function.arguments)
          if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object')
        } catch {
          problems.push(`messages[${i}].tool_calls: arguments of ${call.id} are not a JSON object`)
        }
      }
    }
  }
  if (waiting?.size) problems.push(`An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...waiting].join(', ')}`)
  return problems
}
