import { timingSafeEqual } from 'node:crypto'
import { isIP } from 'node:net'
import { ConsoleError } from './console-error'

/** The header that carries the console token. */
export const TOKEN_HEADER = 'x-dogu-token'

/** True for addresses only this machine can reach. */
export function isLoopback(host: string): boolean {
  if (host === 'localhost') return true
  if (isIP(host) === 4) return host.startsWith('127.')
  return host === '::1' || host === '[::1]'
}

export interface GuardOptions {
  host: string
  token?: string
  /** The port actually listened on, read when a request arrives. */
  port: () => number
}

/**
 * Checks an API request before any method runs, and throws a `ConsoleError` saying why
 * it is refused:
 * - a set token must come in the `x-dogu-token` header (compared in constant time);
 * - on a loopback host the `Host` header must name this server, so a page on another site
 *   cannot reach it through DNS rebinding;
 * - an `Origin` header, which browsers send with cross-site requests, must be this server;
 * - a POST must be `application/json`, which a cross-site form cannot send without a
 *   preflight the server never approves.
 */
export function checkRequest(options: GuardOptions, request: { method: string; headers: Headers }): void {
  const { headers } = request
  const host = headers.get('host') ?? ''
  if (isLoopback(options.host)) {
    const port = options.port()
    const allowed = ['127.0.0.1', 'localhost', '[::1]', options.host].map((name) => `${name}:${port}`)
    if (!allowed.includes(host)) throw new ConsoleError('FORBIDDEN', `Host header ${JSON.stringify(host)} does not name this console (${allowed[0]})`)
  }
  const origin = headers.get('origin')
  if (origin !== null && origin !== `http://${host}`) throw new ConsoleError('FORBIDDEN', `requests from ${origin} are refused: the console only answers its own page`)
  if (options.token !== undefined) {
    const given = Buffer.from(headers.get(TOKEN_HEADER) ?? '')
    const expected = Buffer.from(options.token)
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new ConsoleError('UNAUTHORIZED', `this console needs its token in the ${TOKEN_HEADER} header`)
    }
  }
  if (request.method === 'POST' && !/^application\/json\s*(;|$)/i.test(headers.get('content-type') ?? '')) {
    throw new ConsoleError('INVALID_PAYLOAD', 'POST bodies must be sent as application/json')
  }
}
