import type { HTTP } from '@cordisjs/plugin-http'
import type { Dispatcher } from 'undici'
import type { HttpClient } from './http-client'
import { closingWith, pinnedConnect } from './pinned-agent'

let schemeCounter = 0

/**
 * An `HttpClient` over Cordis 4's `ctx.http` whose connections go to the checked address.
 *
 * `ctx.http` takes no dispatcher per request, but it resolves `proxyAgent` through
 * factories registered with `http.proxy()`. This registers a private scheme whose
 * "proxy" is an undici Agent with a pinned `lookup`: the URL, the Host header and TLS
 * (SNI, certificate check) keep the host name, while the socket connects to the address
 * that passed the guard. The registration is an effect of the context `http` was taken
 * from, so it ends with the plugin.
 */
export function createCordisHttpClient(http: HTTP): HttpClient {
  const scheme = `dogu-pinned-${process.pid}-${++schemeCounter}`
  const agents = new Map<string, Dispatcher>()
  let tokens = 0
  http.proxy([scheme], (url) => {
    const agent = agents.get(url.hostname)
    if (!agent) throw new Error(`no pinned connection ${url.hostname}`)
    return agent
  })
  return async ({ url, method, headers, body, signal, address }) => {
    const token = `pin${++tokens}`
    const agent = new http.undici.Agent(pinnedConnect(address))
    agents.set(token, agent)
    let response: Response
    try {
      response = await http(url, {
        method: method as HTTP.Method,
        headers,
        data: body,
        redirect: 'manual',
        signal,
        keepAlive: false,
        proxyAgent: `${scheme}://${token}`,
      })
    } catch (error) {
      void agent.destroy().catch(() => {})
      throw error
    } finally {
      agents.delete(token)
    }
    return closingWith(response, () => void agent.close().catch(() => {}))
  }
}
