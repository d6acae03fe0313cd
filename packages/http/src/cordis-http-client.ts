import type { HTTP } from '@cordisjs/plugin-http'
import type { Dispatcher } from 'undici'
import type { LookupFunction } from 'node:net'
import type { HttpClient } from './http-client'
import type { ResolvedAddress } from './resolve-target'

let schemeCounter = 0

/**
 * An `HttpClient` over Cordis' `ctx.http` whose connections go to the checked address.
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
    const agent = new http.undici.Agent({ connect: { lookup: pinnedLookup(address) }, connections: 1, pipelining: 1 })
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

function pinnedLookup({ address, family }: ResolvedAddress): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family }])
    else callback(null, address, family)
  }) as LookupFunction
}

// The agent lives as long as the response body: closed once the body is read or dropped.
function closingWith(response: Response, close: () => void): Response {
  if (!response.body) {
    close()
    return response
  }
  const reader = response.body.getReader()
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read()
        if (done) {
          controller.close()
          close()
        } else {
          controller.enqueue(value)
        }
      } catch (error) {
        controller.error(error)
        close()
      }
    },
    async cancel(reason) {
      try {
        await reader.cancel(reason)
      } finally {
        close()
      }
    },
  })
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers })
}
