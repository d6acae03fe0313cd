import ipaddr from 'ipaddr.js'
import { canonicalAddress } from './address-policy'
import { HttpFetchError } from './http-fetch-error'

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number]

/**
 * Hosts and ranges the owner opened despite the SSRF guard: `localhost`, `*.corp.example`
 * (subdomains only), `10.0.0.0/8`, `127.0.0.1`, `fd00::/8`.
 */
export class Allowlist {
  private hosts = new Set<string>()
  private suffixes: string[] = []
  private ranges: Range[] = []

  constructor(entries: readonly string[] = []) {
    for (const raw of entries) {
      const entry = raw.trim().toLowerCase()
      const address = canonicalAddress(entry.replace(/^\[|\]$/g, ''))
      if (ipaddr.isValidCIDR(entry)) {
        this.ranges.push(ipaddr.parseCIDR(entry))
      } else if (address) {
        const ip = ipaddr.parse(address)
        this.ranges.push([ip, ip.kind() === 'ipv4' ? 32 : 128])
      } else if (/^(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$/.test(entry)) {
        const host = entry.replace(/\.$/, '')
        if (host.startsWith('*.')) this.suffixes.push(host.slice(1))
        else this.hosts.add(host)
      } else {
        throw new HttpFetchError('INVALID_OPTIONS', `allowlist entry ${JSON.stringify(raw)} is neither a host name, an IP address nor a CIDR range`)
      }
    }
  }

  /** Whether the host name itself was opened (its addresses are then not checked). */
  allowsHost(hostname: string): boolean {
    const host = hostname.toLowerCase().replace(/\.$/, '')
    return this.hosts.has(host) || this.suffixes.some((suffix) => host.endsWith(suffix))
  }

  /** Whether an address falls in an opened range (IPv4-mapped IPv6 counts as its IPv4). */
  allowsAddress(address: string): boolean {
    const canonical = canonicalAddress(address)
    if (!this.ranges.length || !canonical) return false
    const forms = [ipaddr.parse(canonical), ipaddr.process(canonical)]
    return this.ranges.some(([network, bits]) => forms.some((ip) => ip.kind() === network.kind() && ip.match(network, bits)))
  }
}
