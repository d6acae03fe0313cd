import type { LookupFunction } from 'node:net'
import type { ResolvedAddress } from './resolve-target'

/** The connection options of an undici Agent whose every socket goes to the checked address. */
export function pinnedConnect(address: ResolvedAddress) {
  return { connect: { lookup: pinnedLookup(address) }, connections: 1, pipelining: 1 }
}

/**
 * A DNS lookup that answers the checked address whatever the name: the URL, the Host
 * header and TLS (SNI, certificate check) keep the host name, while the socket connects to
 * the address that passed the guard.
 */
function pinnedLookup({ address, family }: ResolvedAddress): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family }])
    else callback(null, address, family)
  }) as LookupFunction
}

/** The response, with `close` called once its body is read, cancelled or fails: the agent lives as long as the body. */
export function closingWith(response: Response, close: () => void): Response {
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
