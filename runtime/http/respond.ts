/**
 * Turning payloads and errors into HTTP responses with the headers every
 * REST response shares (DECISIONS.md: caching, ETag/304, CORS, encodings,
 * nosniff). Handlers decide what to send; this decides how.
 */
import type { ErrorBody } from '../../core/schema/api.ts'
import { negotiateEncoding, type Encoding } from './encoding.ts'
import { FastResponse } from 'srvx'

/** A successful body, its strong validator, and a way to get compressed copies. */
export interface Payload {
  body: Buffer
  /** Content hash; representations get `"<hash>"`, `"<hash>-br"`, `"<hash>-gz"`. */
  hash: string
  encoded(encoding: Encoding): Promise<Buffer | undefined>
  contentType?: string
}

export type CacheStatus = 'HIT' | 'MISS' | 'BYPASS'

export const EXPOSED_HEADERS =
  'ETag, X-API-Version, X-Cache, X-Snapshot-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, RateLimit, RateLimit-Policy, Retry-After'

export const COMMON_HEADERS: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': EXPOSED_HEADERS,
  'x-content-type-options': 'nosniff',
}

const JSON_TYPE = 'application/json; charset=utf-8'
const ETAG_SUFFIX: Record<Encoding, string> = { br: '-br', gzip: '-gz' }

function etagFor(hash: string, encoding: Encoding | undefined): string {
  return `"${hash}${encoding ? ETAG_SUFFIX[encoding] : ''}"`
}

/** True when If-None-Match names any representation of this content (or `*`). */
export function matchesIfNoneMatch(header: string | null, hash: string): boolean {
  if (!header) return false
  return header.split(',').some((raw) => {
    const tag = raw.trim().replace(/^W\//, '')
    return tag === '*' || tag === `"${hash}"` || tag === `"${hash}-br"` || tag === `"${hash}-gz"`
  })
}

export interface SendOptions {
  cacheStatus: CacheStatus
  maxAgeSeconds: number
  headers?: Record<string, string>
}

/** 200 (or 304) with the negotiated encoding; HEAD gets the headers only. */
export async function sendPayload(request: Request, payload: Payload, options: SendOptions): Promise<Response> {
  const encoding = negotiateEncoding(request.headers.get('accept-encoding'))
  const encodedBody = encoding ? await payload.encoded(encoding) : undefined
  const usedEncoding = encodedBody ? encoding : undefined
  const headers: Record<string, string> = {
    ...COMMON_HEADERS,
    'content-type': payload.contentType ?? JSON_TYPE,
    'cache-control': `public, max-age=${options.maxAgeSeconds}`,
    etag: etagFor(payload.hash, usedEncoding),
    vary: 'Accept-Encoding',
    'x-cache': options.cacheStatus,
    ...options.headers,
  }
  if (matchesIfNoneMatch(request.headers.get('if-none-match'), payload.hash)) {
    delete headers['content-type']
    return new FastResponse(null, { status: 304, headers })
  }
  const body = encodedBody ?? payload.body
  if (usedEncoding) headers['content-encoding'] = usedEncoding
  headers['content-length'] = String(body.length)
  return new FastResponse(request.method === 'HEAD' ? null : body, { status: 200, headers })
}

/** The error body of SPEC.md 2.8, never cached, never a stack trace. */
export function sendError(request: Request, status: number, message: string, options: { field?: string; headers?: Record<string, string> } = {}): Response {
  const body: ErrorBody = { error: { code: status, message, ...(options.field ? { field: options.field } : {}) } }
  const bytes = Buffer.from(JSON.stringify(body))
  return new FastResponse(request.method === 'HEAD' ? null : bytes, {
    status,
    headers: {
      ...COMMON_HEADERS,
      'content-type': JSON_TYPE,
      'content-length': String(bytes.length),
      'cache-control': 'no-store',
      'x-cache': 'BYPASS',
      ...options.headers,
    },
  })
}
