import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { addressRefusal } from './address-policy'
import type { Allowlist } from './allowlist'
import { HttpFetchError } from './http-fetch-error'

/** An address a connection is pinned to. */
export interface ResolvedAddress {
  address: string
  family: 4 | 6
}

/** Resolves a host name to all its addresses; injectable for tests and custom DNS. */
export type HostResolver = (hostname: string, signal: AbortSignal) => Promise<ResolvedAddress[]>

export const systemResolver: HostResolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true, verbatim: true })
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }))
}

/**
 * Resolves the URL's host once and checks every answer; the address returned is the one
 * the connection must go to, so a second DNS answer (rebinding) never matters. A host
 * with any refused answer is refused as a whole.
 */
export async function resolveTarget(url: URL, resolver: HostResolver, allowlist: Allowlist, signal: AbortSignal): Promise<ResolvedAddress> {
  // URL keeps IPv6 literals in brackets and has already normalized odd IPv4 forms
  // (`0x7f000001`, `127.1`, `2130706433`, `0177.0.0.1`) to dotted quads.
  const hostname = url.hostname.replace(/^\[|\]$/g, '')
  const literal = isIP(hostname)
  let answers: ResolvedAddress[]
  if (literal) {
    answers = [{ address: hostname, family: literal as 4 | 6 }]
  } else {
    try {
      answers = await abortable(resolver(hostname, signal), signal)
    } catch (error) {
      if (signal.aborted) throw signal.reason
      throw new HttpFetchError('RESOLVE_FAILED', `could not resolve ${hostname}: ${(error as Error)?.message ?? error}`, { cause: error })
    }
    if (!answers.length) throw new HttpFetchError('RESOLVE_FAILED', `${hostname} has no address`)
  }
  if (!allowlist.allowsHost(hostname)) {
    for (const { address } of answers) {
      const refusal = !allowlist.allowsAddress(address) && addressRefusal(address)
      if (refusal) {
        const via = literal ? '' : ` (${hostname} resolves to ${address})`
        throw new HttpFetchError('ADDRESS_REFUSED', `refused to connect to ${address}${via}: it is ${refusal}. Only public addresses can be fetched unless the owner allowlists the host or range.`)
      }
    }
  }
  return answers[0]
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}
