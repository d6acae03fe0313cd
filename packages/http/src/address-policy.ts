import ipaddr from 'ipaddr.js'
import { isIP } from 'node:net'

type Address = ipaddr.IPv4 | ipaddr.IPv6

// Named so the refusal says what the address is, not only that it is refused.
const METADATA = new Map([
  ['169.254.169.254', 'a cloud metadata address'],
  ['fd00:ec2::254', 'a cloud metadata address'],
  ['100.100.100.200', 'a cloud metadata address'],
])

/** Why a range is refused; only `unicast` (globally routable) addresses pass. */
const RANGES: Record<string, string> = {
  unspecified: 'an unspecified address',
  broadcast: 'a broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT address (100.64.0.0/10)',
  private: 'a private address',
  reserved: 'a reserved address',
  benchmarking: 'a benchmarking address',
  uniqueLocal: 'a unique local address (fc00::/7)',
  deprecatedSiteLocal: 'a site-local address',
  teredo: 'a Teredo tunnel address',
}

/**
 * Why `address` (an IP literal) must not be connected to, or `undefined` when it is a
 * public address. IPv4 embedded in IPv6 (mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`,
 * 6to4 `2002::/16`) is judged by the IPv4 address it carries.
 */
export function addressRefusal(address: string): string | undefined {
  const canonical = canonicalAddress(address)
  if (!canonical) return 'not an IP address'
  return refusal(ipaddr.parse(canonical))
}

/**
 * The address in its canonical text. ipaddr.js reads `::a.b.c.d` as IPv4-mapped; the
 * URL parser writes IPv6 the way the socket layer reads it (`::7f00:1`), so it decides.
 */
export function canonicalAddress(address: string): string | undefined {
  const version = isIP(address)
  if (version === 4) return address
  if (version !== 6) return undefined
  return new URL(`http://[${address}]/`).hostname.slice(1, -1)
}

function refusal(ip: Address): string | undefined {
  const text = ip.toNormalizedString()
  const metadata = METADATA.get(ip.kind() === 'ipv6' ? ip.toString() : text)
  if (metadata) return metadata
  if (ip.kind() === 'ipv6') {
    const parts = (ip as ipaddr.IPv6).parts
    // The deprecated IPv4-compatible form ::a.b.c.d (not :: or ::1): never routable.
    if (parts.slice(0, 6).every((part) => part === 0) && (parts[6] || parts[7] > 1)) return 'a deprecated IPv4-compatible address'
    const embedded = embeddedIPv4(ip as ipaddr.IPv6)
    if (embedded === null) return 'an IPv6 transition address whose IPv4 part cannot be judged'
    if (embedded) {
      const inner = refusal(embedded)
      return inner && `an IPv6 form of ${inner} (${embedded.toString()})`
    }
  }
  const range = ip.range()
  if (range === 'unicast') return undefined
  return RANGES[range] ?? `a special-purpose address (${range})`
}

/** The IPv4 address an IPv6 address carries; `null` when it carries one we cannot read. */
function embeddedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4 | null | undefined {
  const parts = ip.parts
  const fromParts = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 255, low >> 8, low & 255])
  switch (ip.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return fromParts(parts[6], parts[7])
    case 'rfc6052':
      // 64:ff9b::/96 carries the address in its last 32 bits; the local-use 64:ff9b:1::/48
      // spreads it around the u octet and is refused outright.
      return parts[2] === 0 && parts[3] === 0 && parts[4] === 0 && parts[5] === 0 ? fromParts(parts[6], parts[7]) : null
    case '6to4':
      return fromParts(parts[1], parts[2])
  }
  return undefined
}
