import ipaddr from 'ipaddr.js'
import { isIP } from 'node:net'
import { HttpFetchError } from './http-fetch-error'

const PROTOCOLS = new Set(['http:', 'https:'])
const PERCENT = /%([0-9a-fA-F]{2})/g
// RFC 3986 §2.3: an encoded unreserved character means the character itself.
const UNRESERVED = /^[A-Za-z0-9\-._~]$/

/**
 * The URL as `http_fetch` fetches it, and as permission rules see it. One spelling for
 * each URL, so a rule on `http://h/admin*` is not bypassed by another way of writing it:
 *
 * - parsed by the WHATWG URL parser (relative to `base` for a redirect's `Location`):
 *   scheme and host in lower case, IDN hosts in punycode, IPv4 in any notation (`127.1`,
 *   `0x7f000001`, `2130706433`, `0177.0.0.1`) as a dotted quad, IPv6 compressed
 *   (`[0:0::1]` is `[::1]`), the scheme's default port dropped, `.` and `..` segments
 *   (`%2e` included) resolved, `\` read as `/`, tabs and newlines removed;
 * - then: an IPv4-mapped IPv6 literal written as its IPv4 address (`[::ffff:127.0.0.1]`
 *   is `127.0.0.1`), a host name's trailing dot dropped (`h.` is `h`), percent-encoded unreserved
 *   characters decoded (`%61dmin` is `admin`) and other escapes in upper case (`%2f` is
 *   `%2F`), in the path and the query, an empty query (`/admin?`) dropped, and the
 *   fragment removed (it is never sent).
 *
 * Only `http:` and `https:` are accepted; a URL with a user name or password is refused
 * (credentials go in an `Authorization` header, where redirects to other origins drop them).
 */
export function canonicalUrl(input: string, base?: URL): URL {
  let url: URL
  try {
    url = new URL(input, base)
  } catch (error) {
    throw new HttpFetchError('INVALID_URL', `${JSON.stringify(input)} is not a valid URL`, { cause: error })
  }
  if (!PROTOCOLS.has(url.protocol)) {
    throw new HttpFetchError('UNSUPPORTED_PROTOCOL', `${url.protocol} URLs cannot be fetched; use http or https`)
  }
  if (url.username || url.password) {
    throw new HttpFetchError('INVALID_URL', `${url.protocol}//…@${url.host} carries credentials in the URL; send them in an Authorization header instead`)
  }
  const host = url.hostname
  if (host.startsWith('[')) {
    // An IPv4-mapped IPv6 literal is that IPv4 address: `[::ffff:7f00:1]` is `127.0.0.1`.
    const ip = ipaddr.IPv6.parse(host.slice(1, -1))
    if (ip.isIPv4MappedAddress()) url.hostname = ip.toIPv4Address().toString()
  } else if (host.endsWith('.') && !isIP(host)) {
    const bare = host.slice(0, -1)
    if (!bare || bare.endsWith('.')) throw new HttpFetchError('INVALID_URL', `${JSON.stringify(input)} has an empty label in its host name`)
    url.hostname = bare
  }
  url.hash = ''
  const path = normalizeEscapes(url.pathname)
  if (path !== url.pathname) url.pathname = path
  const search = normalizeEscapes(url.search)
  // `?` with nothing after it is dropped: `/admin?` is `/admin`.
  if (search !== url.search || !search) url.search = search
  return url
}

/** Decodes escaped unreserved characters; writes every other escape in upper case. */
function normalizeEscapes(text: string): string {
  if (!text.includes('%')) return text
  return text.replace(PERCENT, (escape, hex: string) => {
    const char = String.fromCharCode(parseInt(hex, 16))
    return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`
  })
}
