import type { CallInfo, DecisionEvent, ToolResult } from '@dogu/core'
import type { ChangeLog } from '@dogu/fs'
import type { IncomingMessage } from 'node:http'
import type { Duplex } from 'node:stream'
import Server from '@cordisjs/plugin-server'
import { type Context, Service } from 'cordis'
import Schema from 'schemastery'
import { ConsoleApi } from './console-api'
import { ConsoleAsker } from './console-asker'
import { ConsoleError, errorBody, HTTP_STATUS } from './console-error'
import { ConsoleLog } from './console-log'
import { checkRequest, isLoopback } from './http-guard'
import { DIST, readStatic } from './static-files'
// For the `ctx.tools`, `ctx.permissions`, `ctx.background` and `ctx.audit` declarations.
import type {} from '@dogu/cordis'

declare module 'cordis' {
  interface Context {
    webui: WebUI
  }
}

/** Where the page and its API are served. */
export const BASE = '/dogu'

/**
 * Where OAuth authorization servers send the operator back after they authorize an imported
 * MCP server: `OAUTH_CALLBACK_PATH` of `@dogu/mcp` (its client plugin's default redirect
 * URL), repeated here because the console does not depend on `@dogu/mcp`.
 */
export const OAUTH_CALLBACK_PATH = '/dogu/mcp/oauth/callback'

// `/dogu/api/<method>`, with or without a query string (the router matches the whole URL).
const API_ROUTE = /^\/dogu\/api\/([\w.]+)(?:\?.*)?$/

/**
 * `ctx.webui`: Dogu's debug console on its own HTTP server. It serves the page at `/dogu`
 * and its API at `/dogu/api/<method>`: reads by GET or POST, anything that changes state
 * by POST only. Loaded with Dogu's services, it is an asker for every permission question.
 *
 * @example
 * await ctx.plugin(WebUI, { port: 5177 })
 * console.log(ctx.webui.url) // http://127.0.0.1:5177/dogu
 */
export class WebUI extends Service {
  static inject = { tools: true, permissions: false, background: false, audit: false }

  static Config: Schema<WebUI.Config> = Schema.object({
    port: Schema.natural().max(65535).default(5177).description('Port to listen on; 0 picks a free one.'),
    maxPort: Schema.natural().max(65535).description('When the port is taken, try the next ones up to this one. Default: only `port`.'),
    host: Schema.string().default('127.0.0.1').description('Address to listen on. Any host but a loopback one needs a token.'),
    token: Schema.string().min(16).description('Secret the API requires in the x-dogu-token header (at least 16 characters).'),
    authority: Schema.natural().default(4).description('The operator\'s authority: calls run with it and questions are answered with it.'),
    logSize: Schema.natural().min(1).max(10_000).default(200).description('Entries the live log keeps.'),
  })

  /** The question board the page answers from. */
  readonly asker: ConsoleAsker
  /** The last calls and permission decisions. */
  readonly log: ConsoleLog
  /** The transport-free API the HTTP routes call. */
  readonly api: ConsoleApi
  private changeLogs = new Set<ChangeLog>()
  private port = 0
  private readonly config: Required<Omit<WebUI.Config, 'token' | 'maxPort'>> & Pick<WebUI.Config, 'token' | 'maxPort'>

  constructor(ctx: Context, config: WebUI.Config = {}) {
    super(ctx, 'webui')
    this.config = { port: 5177, host: '127.0.0.1', authority: 4, logSize: 200, ...config }
    if (!isLoopback(this.config.host) && !this.config.token) {
      throw new ConsoleError('UNAUTHORIZED', `the console listens on ${this.config.host}, which other machines can reach: set a token`)
    }
    // A tool that echoes a request's headers must not show the console's token to the model.
    if (this.config.token) ctx.tools.redact([this.config.token])
    // The console's one operator, named once: `webui` in answers, grants and the audit log (not `webui:webui`).
    this.asker = new ConsoleAsker({ id: 'webui', authority: this.config.authority })
    this.log = new ConsoleLog(this.config.logSize)
    this.api = new ConsoleApi({
      registry: ctx.tools.registry,
      get permissions() { return ctx.get('permissions') },
      get background() { return ctx.get('background') },
      // The Log view's records: `ctx.audit`, when @dogu/cordis loaded it (and it is on).
      get audit() { return ctx.get('audit') },
      changeLogs: () => this.changeLogs,
      asker: this.asker,
      log: this.log,
      authority: this.config.authority,
    })
    ctx.on('tools/call-start', (info: CallInfo) => this.log.callStart(info))
    ctx.on('tools/call-progress', (info: CallInfo, message: string) => {
      this.log.callProgress(info, message)
      this.api.onProgress(info.id, message)
    })
    ctx.on('tools/call-end', (info: CallInfo, result: ToolResult) => this.log.callEnd(info, result))
    ctx.on('permissions/decision', (event: DecisionEvent) => this.log.decision(event))
    ctx.inject(['permissions'], (ctx) => {
      ctx.permissions.asker(this.asker.asker)
    })
    ctx.effect(() => () => this.asker.clear(), 'ctx.webui: forget questions')
  }

  /** The page's address, once the server listens: `http://127.0.0.1:5177/dogu`. */
  get url(): string {
    const host = ['0.0.0.0', '::'].includes(this.config.host) ? '127.0.0.1' : this.config.host.includes(':') ? `[${this.config.host}]` : this.config.host
    return `http://${host}:${this.port}${BASE}`
  }

  /**
   * Lists `@dogu/fs` changes in the console, with undo, until the returned disposer runs
   * (or the calling plugin goes away).
   */
  addChangeLog(log: ChangeLog): () => void {
    const dispose = this.ctx.effect(() => {
      this.changeLogs.add(log)
      return () => this.changeLogs.delete(log)
    }, 'ctx.webui.addChangeLog()')
    return () => {
      dispose()
    }
  }

  async [Service.init]() {
    const { config } = this
    // Its own server, isolated: an app's `ctx.server` (another port) is left alone.
    const scope = this.ctx.isolate('server')
    await scope.plugin(Server, { host: config.host, port: config.port, maxPort: Math.max(config.port, config.maxPort ?? config.port) })
    const server = scope.get('server')!
    if (!server._http.listening) await new Promise((resolve) => server._http.once('listening', resolve))
    this.port = (server._http.address() as { port: number }).port
    // Registered after the server, so it runs before the server's close, which would
    // otherwise wait for every browser's keep-alive connection to time out.
    this.ctx.effect(() => () => server._http.closeAllConnections(), 'ctx.webui: drop open connections')
    this.ctx.effect(() => refuseUpgrades(server), 'ctx.webui: refuse WebSocket upgrades')
    const guard = { host: config.host, token: config.token, port: () => this.port }

    server.all(API_ROUTE, async (req, res) => {
      const respond = (status: number, body: unknown) => {
        res.status = status
        res.headers.set('content-type', 'application/json; charset=utf-8')
        res.headers.set('cache-control', 'no-store')
        res.body = JSON.stringify(body ?? null)
      }
      const controller = new AbortController()
      const onClose = () => { if (!req._req.complete || !res._res.writableEnded) controller.abort(new Error('the console closed the request')) }
      res._res.once('close', onClose)
      try {
        checkRequest(guard, req)
        const name = req.params[1]
        let payload: unknown
        if (req.method === 'GET') {
          if (!ConsoleApi.has(name)) throw new ConsoleError('UNKNOWN_METHOD', `no console method "${name}"`)
          if (!ConsoleApi.isRead(name)) throw new ConsoleError('METHOD_NOT_ALLOWED', `${name} changes state: send it by POST`)
          const text = new URL(req.url, 'http://console').searchParams.get('payload')
          payload = text === null ? {} : parseJson(text)
        } else if (req.method === 'POST') {
          const text = await readBody(req._req, MAX_BODY)
          payload = text ? parseJson(text) : {}
        } else {
          throw new ConsoleError('METHOD_NOT_ALLOWED', `${req.method} is not accepted: use GET to read, POST to act`)
        }
        respond(200, await this.api.handle(name, payload, { signal: controller.signal }))
      } catch (error) {
        if (!ConsoleError.is(error)) throw error
        respond(HTTP_STATUS[error.code as ConsoleError.Code], { error: errorBody(error) })
      } finally {
        res._res.off('close', onClose)
      }
    })

    const page = async (path: string, res: Parameters<Parameters<typeof server.get>[1]>[1]) => {
      const file = await readStatic(DIST, path)
      res.headers.set('x-content-type-options', 'nosniff')
      res.headers.set('content-security-policy', "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'")
      if (!file) {
        res.status = 404
        res.headers.set('content-type', 'text/plain; charset=utf-8')
        res.body = path ? 'not found' : 'The console page is not built: run `yarn build` (or `node scripts/build.mjs @dogu/webui`).'
        return
      }
      res.headers.set('content-type', file.type)
      res.body = file.body as unknown as BodyInit
    }
    // The OAuth redirect: the page itself, which completes the authorization through the
    // API as the operator logged in to it (sources.complete). The route acts on nothing: a
    // link someone else opens completes nothing. The code in its address goes nowhere else.
    server.get(new RegExp(`^${OAUTH_CALLBACK_PATH}(?:\\?.*)?$`), async (_req, res) => {
      await page('', res)
      res.headers.set('referrer-policy', 'no-referrer')
      res.headers.set('cache-control', 'no-store')
    })
    server.get(/^\/dogu(?:\?.*)?$/, async (_req, res) => page('', res))
    server.get(/^\/dogu\/([^?]*)(?:\?.*)?$/, async (req, res) => page(req.params[1], res))
  }
}

/**
 * The console only polls over HTTP, so its server takes no upgrade of any kind: every
 * request that asks for one (WebSocket or another protocol, on any path, with any Host,
 * Origin or token) gets `400` and its socket closed. plugin-server would otherwise hand
 * each one to its WebSocket server, whose asynchronous `shouldHandle` counts as yes for
 * any request: `101`, and a socket that may buffer 100 MiB per message. The server is the
 * console's own (isolated from the app's `ctx.server`), so no other plugin's upgrade is
 * lost. Returns the disposer that removes the refusal.
 */
function refuseUpgrades(server: Server): () => void {
  const http = server._http
  // The WebSocket server lets go of the HTTP server (its upgrade listener included); a
  // socket it accepted before this ran is dropped.
  server._ws.close()
  for (const client of server._ws.clients) client.terminate()
  http.removeAllListeners('upgrade')
  const refuse = (_req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy())
    socket.once('finish', () => socket.destroy())
    socket.end(UPGRADE_REFUSED)
  }
  http.on('upgrade', refuse)
  return () => { http.off('upgrade', refuse) }
}

const UPGRADE_BODY = 'The Dogu console accepts no protocol upgrade: its page polls over HTTP.\n'
const UPGRADE_REFUSED = [
  'HTTP/1.1 400 Bad Request',
  'Connection: close',
  'Content-Type: text/plain; charset=utf-8',
  `Content-Length: ${Buffer.byteLength(UPGRADE_BODY)}`,
  '',
  UPGRADE_BODY,
].join('\r\n')

/** Largest request body the API reads (a call's arguments included). */
const MAX_BODY = 2_000_000

/** The request body as text, refused once it passes `limit` bytes. */
async function readBody(stream: AsyncIterable<Buffer>, limit: number): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of stream) {
    size += chunk.length
    if (size > limit) throw new ConsoleError('INVALID_PAYLOAD', `the request body is larger than ${limit} bytes`)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new ConsoleError('INVALID_PAYLOAD', `the payload is not JSON: ${error instanceof Error ? error.message : String(error)}`)
  }
}

export namespace WebUI {
  export interface Config {
    /** Port to listen on; 0 picks a free one. @default 5177 */
    port?: number
    /** When `port` is taken, the next ports up to this one are tried. @default port */
    maxPort?: number
    /** @default '127.0.0.1' */
    host?: string
    /** Required for any host but a loopback one; sent by the page in the `x-dogu-token` header. */
    token?: string
    /** The operator's authority: calls run with it, questions are answered with it. @default 4 */
    authority?: number
    /** @default 200 */
    logSize?: number
  }
}
