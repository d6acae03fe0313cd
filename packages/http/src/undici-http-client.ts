import { Agent, fetch } from 'undici'
import type { HttpClient } from './http-client'
import { closingWith, pinnedConnect } from './pinned-agent'

/**
 * An `HttpClient` straight over undici, for hosts whose `ctx.http` takes no per-request
 * connection (Koishi 4's `@koishijs/plugin-http`), or none loaded: every request gets an
 * Agent whose socket goes to the checked address, closed with the response's body.
 */
export function createUndiciHttpClient(): HttpClient {
  return async ({ url, method, headers, body, signal, address }) => {
    const agent = new Agent(pinnedConnect(address))
    let response: Response
    try {
      response = await fetch(url, { method, headers, body, signal, redirect: 'manual', dispatcher: agent }) as unknown as Response
    } catch (error) {
      void agent.destroy().catch(() => {})
      throw error
    }
    return closingWith(response, () => void agent.close().catch(() => {}))
  }
}
