import { describe, expect, it } from 'vitest'
import { addressRefusal } from '../src/address-policy'
import { Allowlist } from '../src/allowlist'
import { HttpFetchError } from '../src/http-fetch-error'

const REFUSED: [string, string][] = [
  ['127.0.0.1', 'a loopback address'],
  ['127.255.0.9', 'a loopback address'],
  ['10.1.2.3', 'a private address'],
  ['172.16.0.1', 'a private address'],
  ['172.31.255.255', 'a private address'],
  ['192.168.1.1', 'a private address'],
  ['169.254.1.1', 'a link-local address'],
  ['169.254.169.254', 'a cloud metadata address'],
  ['100.64.0.1', 'a carrier-grade NAT address (100.64.0.0/10)'],
  ['100.127.255.254', 'a carrier-grade NAT address (100.64.0.0/10)'],
  ['100.100.100.200', 'a cloud metadata address'],
  ['224.0.0.1', 'a multicast address'],
  ['239.255.255.250', 'a multicast address'],
  ['0.0.0.0', 'an unspecified address'],
  ['0.1.2.3', 'an unspecified address'],
  ['255.255.255.255', 'a broadcast address'],
  ['240.0.0.1', 'a reserved address'],
  ['192.0.2.1', 'a reserved address'],
  ['::1', 'a loopback address'],
  ['::', 'an unspecified address'],
  ['fe80::1', 'a link-local address'],
  ['fc00::1', 'a unique local address (fc00::/7)'],
  ['fd12:3456::1', 'a unique local address (fc00::/7)'],
  ['fd00:ec2::254', 'a cloud metadata address'],
  ['ff02::1', 'a multicast address'],
  ['::ffff:127.0.0.1', 'an IPv6 form of a loopback address (127.0.0.1)'],
  ['::ffff:7f00:1', 'an IPv6 form of a loopback address (127.0.0.1)'],
  ['::ffff:10.0.0.1', 'an IPv6 form of a private address (10.0.0.1)'],
  ['::ffff:169.254.169.254', 'an IPv6 form of a cloud metadata address (169.254.169.254)'],
  ['::ffff:0:192.168.0.1', 'an IPv6 form of a private address (192.168.0.1)'],
  ['64:ff9b::10.0.0.1', 'an IPv6 form of a private address (10.0.0.1)'],
  ['64:ff9b::7f00:1', 'an IPv6 form of a loopback address (127.0.0.1)'],
  ['64:ff9b:1::1', 'an IPv6 transition address whose IPv4 part cannot be judged'],
  ['2002:7f00:1::', 'an IPv6 form of a loopback address (127.0.0.1)'],
  ['2002:c0a8:101::1', 'an IPv6 form of a private address (192.168.1.1)'],
  ['::127.0.0.1', 'a deprecated IPv4-compatible address'],
  ['::8.8.8.8', 'a deprecated IPv4-compatible address'],
  ['2001::1', 'a Teredo tunnel address'],
  ['2001:db8::1', 'a reserved address'],
  ['not-an-ip', 'not an IP address'],
]

const PUBLIC = ['93.184.216.34', '8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1']

describe('addressRefusal', () => {
  it.each(REFUSED)('refuses %s as %s', (address, reason) => {
    expect(addressRefusal(address)).toBe(reason)
  })

  it.each(PUBLIC)('lets public %s through', (address) => {
    expect(addressRefusal(address)).toBeUndefined()
  })
})

describe('Allowlist', () => {
  const list = new Allowlist(['127.0.0.1', '10.0.0.0/8', 'fd00::/8', 'intranet.example', '*.corp.example', '[::1]'])

  it('matches addresses and CIDR ranges, IPv4-mapped forms included', () => {
    expect(['127.0.0.1', '10.9.9.9', '::ffff:10.1.1.1', 'fd00::5', '::1'].map((address) => list.allowsAddress(address))).toEqual([true, true, true, true, true])
    expect(['127.0.0.2', '11.0.0.1', 'fe80::1', 'x'].map((address) => list.allowsAddress(address))).toEqual([false, false, false, false])
  })

  it('matches host names exactly, and subdomains for *. entries', () => {
    expect(['intranet.example', 'INTRANET.example.', 'a.corp.example', 'a.b.corp.example'].map((host) => list.allowsHost(host))).toEqual([true, true, true, true])
    expect(['corp.example', 'x.intranet.example', 'evilcorp.example'].map((host) => list.allowsHost(host))).toEqual([false, false, false])
  })

  it('rejects entries it cannot read', () => {
    const error = (() => { try { new Allowlist(['http://x/']) } catch (error) { return error } })()
    expect(HttpFetchError.is(error, 'INVALID_OPTIONS')).toBe(true)
  })
})
