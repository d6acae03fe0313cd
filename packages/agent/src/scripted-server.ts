import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { ChatMessage } from './providers/openai-chat'
import { ScriptedAnthropic } from './scripted-anthropic'
import { ScriptedChat } from './scripted-chat'
import { ScriptedResponses } from './scripted-responses'

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
  /**
   * Reasoning before the reply. Anthropic: a signed `thinking` block (streamed as
   * `thinking_delta` pieces, then a `signature_delta`); Responses: a `reasoning` item with
   * this summary, and its `encrypted_content` when the request includes
   * `reasoning.encrypted_content`. Chat Completions leaves it out.
   */
  thinking?: string
  /** Anthropic: a `redacted_thinking` block after the thinking. */
  redactedThinking?: boolean
}

/** Which API a request spoke: Chat Completions, Anthropic Messages or OpenAI Responses. */
export type ScriptedApi = 'chat' | 'anthropic' | 'responses'

/** A reason a real endpoint would refuse a request, with the status it would answer. */
export interface ScriptedProblem {
  status: number
  message: string
}

/** One server-sent event: its `event:` name (if any) and its `data`. */
export interface SseEvent {
  event?: string
  data: unknown
}

/** What the server saw of one request. */
export interface ScriptedRequest {
  /** The API the request's path named. `body.messages` is typed for Chat Completions. */
  api: ScriptedApi
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
  /** The base URL to give `runAgent` or the `openai` SDK, ending in `/v1`. */
  baseURL: string
  /** `http://127.0.0.1:<port>`, the base URL the Anthropic SDK takes (it adds `/v1/messages`). */
  origin: string
  /** Every request so far. */
  requests: ScriptedRequest[]
  /** Stops listening and closes open connections. A second call does nothing. */
  close(): Promise<void>
}

/**
 * A model server on loopback that replays a script: for tests, benchmarks and `yarn demo`,
 * with no network and no key. It speaks OpenAI Chat Completions (`…/chat/completions`),
 * Anthropic Messages (`…/v1/messages`) and OpenAI Responses (`…/responses`). Like a strict
 * real endpoint it refuses what the real API refuses, with its status and words: for Chat
 * Completions `content: null` next to tool calls, tool calls left without results, results
 * for unknown calls, arguments that are not a JSON object, `tools: []` and `stream_options`
 * without `stream`; for Messages tool uses without results, empty text blocks, and thinking
 * that came back changed or left out of the turn it belongs to; for Responses (`store: false`
 * included) reasoning items that came back changed or missing, and calls without outputs.
 * Each request records what it found. Node only: `node:http` is loaded when the server starts.
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

  const dialects = { chat: new ScriptedChat(), anthropic: new ScriptedAnthropic(), responses: new ScriptedResponses() }
  const errorBody = { chat: ScriptedChat.errorBody, anthropic: ScriptedAnthropic.errorBody, responses: ScriptedResponses.errorBody }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const raw = Buffer.concat(chunks).toString('utf8')
    const path = (req.url ?? '').split('?')[0]
    const api: ScriptedApi | undefined = path.endsWith('/chat/completions') ? 'chat' : path.endsWith('/messages') ? 'anthropic' : path.endsWith('/responses') ? 'responses' : undefined
    if (req.method !== 'POST' || !api) return send(res, 404, ScriptedChat.errorBody(404, `no route ${req.method} ${req.url}`))
    const fail = (status: number, message: string) => send(res, status, errorBody[api](status, message))
    const dialect = dialects[api]
    let body: ScriptedRequest['body']
    try {
      body = JSON.parse(raw)
    } catch {
      return fail(400, 'We could not parse the JSON body of your request.')
    }
    const found: ScriptedProblem[] = !body || typeof body !== 'object' ? [{ status: 400, message: 'the body is not a JSON object' }] : dialect.refusals(body, options.model)
    const request: ScriptedRequest = { api, raw, body, headers: req.headers, problems: found.map((problem) => problem.message) }
    requests.push(request)
    if (found.length) return fail(found[0].status, request.problems.join('; '))
    if (body.stream && options.noStream === 'refuse') return fail(400, 'stream is not supported by this endpoint')
    // The script's turns count the requests it answers, not the ones refused.
    const index = served++
    const script = options.script
    const reply = typeof script === 'function' ? script(request, index) : script[index]
    if (!reply) return fail(500, `the script has no reply for request #${index + 1}`)
    if (reply.status) {
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers })
      return void res.end(reply.body ?? (api === 'anthropic' ? ScriptedAnthropic.errorBody(reply.status, `scripted ${reply.status}`) : JSON.stringify({ error: { message: `scripted ${reply.status}`, type: 'scripted' } })))
    }
    if (!body.stream || options.noStream === 'json') return send(res, 200, JSON.stringify(dialect.whole(reply, body, index)))
    return writeSse(res, reply, dialect.events(reply, body, index, (text) => pieces(text, reply.pieceSize)).map(sseLine))
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo
  let closing: Promise<void> | undefined
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    origin: `http://127.0.0.1:${port}`,
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

function send(res: ServerResponse, status: number, body: string) {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(body)
}

function sseLine({ event, data }: SseEvent): string {
  return `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`
}

function pieces(text: string, size: number | undefined): string[] {
  if (!size || size <= 0 || text.length <= size) return [text]
  const list: string[] = []
  for (let i = 0; i < text.length; i += size) list.push(text.slice(i, i + size))
  return list
}

/** Writes the events, `reply.byteSize` bytes at a time, stalling after `reply.stallAfter` of them. */
async function writeSse(res: ServerResponse, reply: ScriptedReply, lines: readonly string[]) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
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
