/**
 * Turning payloads and errors into HTTP responses with the headers every
 * REST response shares (docs/api.md: Caching and Errors: ETag/304, CORS,
 * encodings, nosniff). Handlers decide what to send; this decides how.
 */
import { ENCODINGS } from '../../core/snapshot.ts'
import { negotiateEncoding, type Encoding } from './encoding.ts'
import type { Readable } from 'node:stream'
import { FastResponse } from 'srvx'

/** A successful body, its strong validator, and a way to get compressed copies. */
export interface Payload {
  body: Buffer
  /** Content hash; representations get `"<hash>"`, `"<hash>-br"`, `"<hash>-gz"`. */
  hash: string
  encoded(encoding: Encoding): Promise<Buffer | undefined>
  contentType?: string
}

type CacheStatus = 'HIT' | 'MISS' | 'BYPASS'

const EXPOSED_HEADERS =
  'ETag, X-API-Version, X-Cache, X-Snapshot-Id, X-Ignored-Parameters, X-Oldest-Snapshot-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, RateLimit, RateLimit-Policy, Retry-After, X-Request-Id'

/**
 * Response headers as a list of pairs, not an object: srvx hands pairs to
 * Node as they are, while spreading a dozen hyphenated keys into an object
 * drops V8 into dictionary mode (measured: ~30 µs a response against ~1 µs,
 * most of the per-request budget of a static file).
 */
export type HeaderList = [name: string, value: string][]

const COMMON_HEADERS: HeaderList = [
  ['access-control-allow-origin', '*'],
  ['access-control-expose-headers', EXPOSED_HEADERS],
  ['x-content-type-options', 'nosniff'],
]

/** COMMON_HEADERS, then `headers`, in that order, as one new list. */
export function withCommonHeaders(...lists: HeaderList[]): HeaderList {
  const out: HeaderList = COMMON_HEADERS.slice()
  for (const list of lists) appendHeaders(out, list)
  return out
}

function appendHeaders(to: HeaderList, list: HeaderList): void {
  for (let i = 0; i < list.length; i++) to.push(list[i]!)
}

/*
 * Pairs every answer of a kind shares, made once: nothing changes a pair once it is in a list (lists get
 * pairs added, never edited), and each one made per request was an allocation on the single-job path.
 */
const JSON_TYPE = 'application/json; charset=utf-8'
const JSON_TYPE_PAIR: [string, string] = ['content-type', JSON_TYPE]
const VARY_PAIR: [string, string] = ['vary', 'Accept-Encoding']
const X_CACHE_PAIRS: Record<CacheStatus, [string, string]> = {
  HIT: ['x-cache', 'HIT'],
  MISS: ['x-cache', 'MISS'],
  BYPASS: ['x-cache', 'BYPASS'],
}
let cacheControl: [string, string] = ['cache-control', 'public, max-age=60']
function cacheControlPair(maxAgeSeconds: number): [string, string] {
  const value = `public, max-age=${maxAgeSeconds}`
  if (cacheControl[1] !== value) cacheControl = ['cache-control', value]
  return cacheControl
}
const ETAG_SUFFIX = Object.fromEntries(ENCODINGS.map(({ name, etagSuffix }) => [name, etagSuffix])) as Record<
  Encoding,
  string
>

function etagFor(hash: string, encoding: Encoding | undefined): string {
  return `"${hash}${encoding ? ETAG_SUFFIX[encoding] : ''}"`
}

/**
 * True when If-None-Match names the representation being sent (its encoding's
 * tag; weak comparison, RFC 9110 13.1.2) or is `*`. Another encoding's tag
 * does not match: a cache holding only the gzip copy could not use a 304
 * naming the identity one.
 */
export function matchesIfNoneMatch(header: string | null, etag: string): boolean {
  if (!header) return false
  return header.split(',').some((raw) => {
    const tag = raw.trim().replace(/^W\//, '')
    return tag === '*' || tag === etag
  })
}

/**
 * What a REST answer is, before it is a Response: the h3 routes wrap it in
 * one, the precomputed fast path (precomputed.ts) writes it to Node's
 * response as it is. `body` is null for HEAD, 304 and bodiless answers.
 */
export interface Reply {
  status: number
  headers: HeaderList
  body: Buffer | null
  /** A body streamed from a file instead (a bulk export); `body` is then null. */
  stream?: Readable
  /**
   * When set, `body` is on loan (a page in the response cache's ring): call
   * this once it has been sent or never will be. Until then its bytes stay.
   */
  release?: () => void
}

/** The parts of a request an answer depends on: a web Request has them, and so does a Node request's adapter. */
export interface RequestLike {
  method: string
  headers: { get(name: string): string | null }
}

/** Node's response (HTTP/1 or 2) as far as a loaned body needs it. */
interface SentBy {
  readonly closed?: boolean
  once(event: 'close', listener: () => void): unknown
}

/**
 * A Reply as the Response h3 sends. A body on loan is released when Node's
 * response `sentBy` closes (srvx hands the same bytes to the socket, which may
 * still be sending them after the handler returns); without one, it is
 * copied and released at once.
 */
export function replyResponse(reply: Reply, sentBy?: SentBy): Response {
  let body = reply.body
  if (reply.release) {
    if (sentBy && !sentBy.closed) sentBy.once('close', reply.release)
    else {
      body = body && Buffer.from(body)
      reply.release()
    }
  }
  // srvx pipes a Node stream to the socket and destroys it when the client goes away.
  return new FastResponse(reply.stream ? (reply.stream as unknown as ReadableStream) : body, {
    status: reply.status,
    headers: reply.headers,
  })
}

/** The headers of a successful answer a shared cache may keep: every cacheable response sets them here. */
export function cacheableHeaders(etag: string, maxAgeSeconds: number, cacheStatus: CacheStatus): HeaderList {
  return [
    ['cache-control', `public, max-age=${maxAgeSeconds}`],
    ['etag', etag],
    ['x-cache', cacheStatus],
  ]
}

export interface SendOptions {
  cacheStatus: CacheStatus
  maxAgeSeconds: number
  headers?: HeaderList
  /** The headers only shared caches read (tags, their own lifetime; see edge-headers.ts), on 200 and 304 alike. */
  edge?: HeaderList
  /** The payload's body is on loan until this is called (see Reply.release); the reply takes it over. */
  release?: () => void
  /** When the representation last changed (epoch ms): sent as Last-Modified, and If-Modified-Since answered from it. */
  lastModified?: number
}

/** The last Last-Modified pair made, by its epoch second: a snapshot's answers share one. */
let lastModified = { second: Number.NaN, pair: ['last-modified', ''] as [string, string] }
function lastModifiedPair(ms: number): [string, string] {
  const second = Math.floor(ms / 1000)
  if (lastModified.second !== second)
    lastModified = { second, pair: ['last-modified', new Date(second * 1000).toUTCString()] }
  return lastModified.pair
}

/**
 * Whether the client's copy is current: If-None-Match decides when sent (RFC 9110 13.2.2); otherwise, on
 * GET and HEAD, If-Modified-Since with a readable date no earlier than Last-Modified (whole seconds).
 */
function notModified(request: RequestLike, etag: string, lastModified: number | undefined): boolean {
  const ifNoneMatch = request.headers.get('if-none-match')
  if (ifNoneMatch) return matchesIfNoneMatch(ifNoneMatch, etag)
  if (lastModified === undefined || (request.method !== 'GET' && request.method !== 'HEAD')) return false
  const ifModifiedSince = request.headers.get('if-modified-since')
  if (!ifModifiedSince) return false
  const since = Date.parse(ifModifiedSince)
  return !Number.isNaN(since) && Math.floor(lastModified / 1000) * 1000 <= since
}

/** A value, or a promise of one: answers that need nothing awaited are given back in the same turn. */
export type MaybePromise<T> = T | Promise<T>

/**
 * 200 (or 304) with the negotiated encoding; HEAD gets the headers only.
 * Synchronous unless a compressed copy has to be waited for: promises and
 * their turns of the microtask queue were ~2 us of a single job's ~20.
 */
export function payloadReply(request: RequestLike, payload: Payload, options: SendOptions): MaybePromise<Reply> {
  const encoding = negotiateEncoding(request.headers.get('accept-encoding'))
  if (encoding === undefined) return replyWith(request, payload, options, undefined, undefined)
  return payload.encoded(encoding).then(
    (encodedBody) => replyWith(request, payload, options, encoding, encodedBody),
    (error: unknown) => {
      options.release?.()
      throw error
    },
  )
}

function replyWith(
  request: RequestLike,
  payload: Payload,
  options: SendOptions,
  encoding: Encoding | undefined,
  encodedBody: Buffer | undefined,
): Reply {
  const usedEncoding = encodedBody ? encoding : undefined
  const etag = etagFor(payload.hash, usedEncoding)
  const unchanged = notModified(request, etag, options.lastModified)
  // One list, filled in order; the pairs that are the same for every answer are shared, not made again.
  const headers = COMMON_HEADERS.slice()
  headers.push(cacheControlPair(options.maxAgeSeconds), ['etag', etag], VARY_PAIR, X_CACHE_PAIRS[options.cacheStatus])
  if (options.headers) appendHeaders(headers, options.headers)
  if (options.edge) appendHeaders(headers, options.edge)
  if (options.lastModified !== undefined) headers.push(lastModifiedPair(options.lastModified))
  const body = encodedBody ?? payload.body
  const sent = unchanged || request.method === 'HEAD' ? null : body
  // The body or its compressed copy stays on loan until sent; no body at all frees it now.
  const release = sent === null ? undefined : options.release
  if (release === undefined) options.release?.()
  if (unchanged) return { status: 304, headers, body: null }
  headers.push(payload.contentType === undefined ? JSON_TYPE_PAIR : ['content-type', payload.contentType])
  if (usedEncoding) headers.push(['content-encoding', usedEncoding])
  headers.push(['content-length', String(body.length)])
  return release ? { status: 200, headers, body: sent, release } : { status: 200, headers, body: sent }
}

/** payloadReply as a Response, for routes that answer through h3 alone. */
export async function sendPayload(request: RequestLike, payload: Payload, options: SendOptions): Promise<Response> {
  return replyResponse(await payloadReply(request, payload, options))
}
