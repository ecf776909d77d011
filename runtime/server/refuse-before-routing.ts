/**
 * Requests refused before routing, with the JSON error body rather than the
 * bare status srvx or Node would send: HTTP versions other than 1.x, request
 * targets that are no URL this server routes, and a missing, repeated or
 * malformed Host.
 */
import type { IncomingMessage } from 'node:http'

/**
 * Request targets srvx refuses with a bare, bodiless 400 before the app sees
 * them (`file:///etc/passwd`, `ftp://x/`, `http://[::1/`): not origin-form,
 * not `*`, not an http(s) absolute-form URL. The same test srvx applies.
 */
function isUnroutableTarget(target: string | undefined): boolean {
  if (!target || target[0] === '/' || target === '*') return false
  if (!URL.canParse(target)) return true
  const url = new URL(target)
  return !((url.protocol === 'http:' || url.protocol === 'https:') && url.host !== '')
}

/** Why a request is refused before routing (status and message), or undefined to let it through. */
export function refuseBeforeRouting(request: IncomingMessage): [status: number, message: string] | undefined {
  // Node's parser takes any HTTP/x.y; this server speaks HTTP/1.x (RFC 9110 15.6.6).
  if (request.httpVersionMajor !== 1) return [505, 'HTTP version not supported: this server speaks HTTP/1.1.']
  if (isUnroutableTarget(request.url))
    return [400, 'Malformed request target: use a path (origin-form) or an http(s) URL.']
  // HTTP/1.1 requires a Host header (RFC 9112, 3.2); Node is told not to answer its absence itself (below).
  if (request.httpVersion === '1.1' && request.headers.host === undefined)
    return [400, 'HTTP/1.1 requests need a Host header.']
  // One Host, and a valid one (RFC 9112 3.2: a 400 otherwise); Node keeps the first of several silently.
  const host = request.headers.host
  if (host !== undefined && (!isValidHost(host) || hostLines(request.rawHeaders) > 1))
    return [400, 'The Host header must appear once and be a host name or address, with an optional port.']
  return undefined
}

/**
 * A Host field value (RFC 3986 3.2.2-3.2.3): a bracketed IP literal (IPv6,
 * with a zone id, or IPvFuture), or a reg-name/IPv4 of unreserved and
 * sub-delim characters and %XX escapes; then an optional port of digits.
 */
const HOST_SYNTAX = /^(?:\[[0-9A-Za-z:.%_~-]+\]|(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)(?::(\d*))?$/

/** The last Host value found valid. */
let lastValidHost: string | undefined

/**
 * Whether `host` is a valid Host value whose port, if any, is at most 65535,
 * and one a URL can hold: RFC 3986 lets `1.2.3.4.5`, `256.1.1.1` or `[1.2.3.4]`
 * through as names, but the WHATWG URL parser every handler's `event.url`
 * uses throws on them, which would be a 500 instead of this 400. (An empty
 * Host is what RFC 9112 asks for when the target has no authority.)
 */
function isValidHost(host: string): boolean {
  // Nearly every request names the host the one before it did: the URL parse (~0.7 us) is done once for it.
  if (host === lastValidHost) return true
  const match = HOST_SYNTAX.exec(host)
  const valid =
    match !== null &&
    (match[1] === undefined || match[1] === '' || Number(match[1]) <= 65535) &&
    (host === '' || URL.canParse(`http://${host}/`))
  if (valid) lastValidHost = host
  return valid
}

/** How many Host lines a request carried. */
function hostLines(rawHeaders: string[]): number {
  let count = 0
  for (let i = 0; i < rawHeaders.length; i += 2)
    if (rawHeaders[i]!.length === 4 && rawHeaders[i]!.toLowerCase() === 'host') count++
  return count
}
