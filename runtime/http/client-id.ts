/**
 * Who is asking, for rate limiting (docs/api.md: Rate limits): the TCP peer address;
 * X-Forwarded-For only when the peer is a configured trusted proxy, read
 * right to left past further trusted hops; IPv6 clients grouped by /64 so
 * one host cannot rotate through its own subnet.
 */
import { isIPv4 } from 'node:net'
import ipaddr from 'ipaddr.js'

export type TrustedProxies = (address: ipaddr.IPv4 | ipaddr.IPv6) => boolean

const NO_PROXIES: TrustedProxies = () => false

/** Compiles `JOBSNAP_TRUST_PROXY` entries (addresses or CIDRs) into a matcher. Throws on a bad entry. */
export function trustedProxyMatcher(entries: string[]): TrustedProxies {
  return addressMatcher('JOBSNAP_TRUST_PROXY', entries)
}

/** Compiles a setting's addresses or CIDRs into a matcher; the error names `setting` and the bad entry. */
export function addressMatcher(setting: string, entries: string[]): TrustedProxies {
  const ranges = entries.map((entry) => {
    try {
      return entry.includes('/')
        ? ipaddr.parseCIDR(entry)
        : ([ipaddr.parse(entry), ipaddr.parse(entry).kind() === 'ipv4' ? 32 : 128] as [
            ipaddr.IPv4 | ipaddr.IPv6,
            number,
          ])
    } catch {
      throw new Error(`${setting}: ${JSON.stringify(entry)} is not an IP address or CIDR`)
    }
  })
  if (ranges.length === 0) return NO_PROXIES
  return (address) => ranges.some(([range, bits]) => range.kind() === address.kind() && address.match(range, bits))
}

/** Whether a TCP peer address (as Node reports it) is one `matches` accepts. */
export function peerMatches(peer: string | undefined, matches: TrustedProxies): boolean {
  const address = parse(peer)
  return address !== undefined && matches(address)
}

function parse(address: string | undefined): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (!address) return undefined
  const trimmed = address.trim().replace(/^\[|\]$/g, '')
  // ipaddr.process turns IPv4-mapped IPv6 (::ffff:1.2.3.4) back into IPv4.
  return ipaddr.isValid(trimmed) ? ipaddr.process(trimmed) : undefined
}

/** The rate-limit key: an IPv4 address, or the /64 prefix of an IPv6 one. */
function clientKey(address: ipaddr.IPv4 | ipaddr.IPv6): string {
  if (address.kind() === 'ipv4') return address.toString()
  const parts = (address as ipaddr.IPv6).parts.slice(0, 4)
  return `${parts.map((p) => p.toString(16)).join(':')}::/64`
}

/** The last peer address found to be plain IPv4. */
let lastIPv4Peer: string | undefined

/** Resolves the client key from the socket peer and the X-Forwarded-For header. */
export function resolveClient(
  peer: string | undefined,
  forwardedFor: string | null,
  isTrusted: TrustedProxies,
): string {
  // The common case, skipping ipaddr's parse: a plain IPv4 peer is already its own key (and the peer of
  // the request before is tested once: a keep-alive connection or a proxy sends many).
  if (
    peer !== undefined &&
    (peer === lastIPv4Peer || isIPv4(peer)) &&
    (forwardedFor === null || isTrusted === NO_PROXIES)
  ) {
    lastIPv4Peer = peer
    return peer
  }
  let client = parse(peer)
  if (!client) return 'unknown'
  if (forwardedFor && isTrusted(client)) {
    const hops = forwardedFor
      .split(',')
      .map((hop) => hop.trim())
      .reverse()
    for (const hop of hops) {
      const address = parse(hop)
      if (!address) break
      client = address
      if (!isTrusted(address)) break
    }
  }
  return clientKey(client)
}
