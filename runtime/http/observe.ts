/**
 * Every request, seen once at the Node level where its whole life is
 * visible (precomputed answers, computed ones, and the 400s refused before
 * routing): an `X-Request-Id` echoed or made, then, when the response is
 * done, one access-log line and the metrics.
 *
 * Done in a ServerResponse subclass that Node creates for every request
 * (`createServer({ ServerResponse })`), not with a wrapper function and a
 * 'close' listener per request: per-request closures and listeners were
 * measurable against a cached request's ~40 us.
 */
import { randomUUID } from 'node:crypto'
import { type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders, ServerResponse } from 'node:http'
import type { AccessLine } from '../ops/log.ts'
import { routeOf, type Metrics } from '../ops/metrics.ts'

/** An id a client (or the proxy in front) sent is kept when it is a plain token; anything else is replaced. */
const CLIENT_REQUEST_ID = /^[\w.:@/+=-]{1,128}$/

export interface RequestObserver {
  access?: (line: AccessLine) => void
  metrics?: Metrics
  clientOf(request: IncomingMessage): string
}

type Headers = OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined

/**
 * `headers` with X-Request-Id added, in the shape it came. A list (pairs or
 * flat, as srvx and the pre-routing refusals pass it) is a fresh one per
 * response, so the id is appended to it; an object is copied.
 */
function addRequestId(headers: Headers, id: string): { headers: Headers; cache?: string } {
  if (headers === undefined) return { headers: { 'x-request-id': id } }
  if (!Array.isArray(headers))
    return { headers: { ...headers, 'x-request-id': id }, cache: String(headers['x-cache'] ?? '') || undefined }
  let cache: string | undefined
  if (Array.isArray(headers[0])) {
    for (const pair of headers as unknown as [string, string][]) if (pair[0] === 'x-cache') cache = pair[1]
    ;(headers as unknown as [string, string][]).push(['x-request-id', id])
    return { headers, cache }
  }
  for (let i = 0; i < headers.length; i += 2) if (headers[i] === 'x-cache') cache = String(headers[i + 1])
  headers.push('x-request-id', id)
  return { headers, cache }
}

/** The class Node should create responses with, observing for `observer`; pass it as `ServerResponse` to createServer. */
export function observedResponseClass(observer: RequestObserver): typeof ServerResponse {
  const { access, metrics, clientOf } = observer

  class ObservedResponse extends ServerResponse<IncomingMessage> {
    private observedSince = performance.now()
    private readonly peer: IncomingMessage['socket']
    private readonly bytesBefore: number
    private readonly requestId: string
    private cacheStatus: string | undefined = undefined

    constructor(request: IncomingMessage) {
      super(request)
      this.peer = request.socket
      this.bytesBefore = this.peer.bytesWritten
      const sent = request.headers['x-request-id']
      this.requestId = typeof sent === 'string' && CLIENT_REQUEST_ID.test(sent) ? sent : randomUUID()
    }

    // Node's overloads (status, [reason], [headers]) in one signature; the headers are always last when given.
    override writeHead(status: number, ...rest: unknown[]): this {
      const last = rest.length - 1
      const headersAt = last >= 0 && typeof rest[last] === 'object' ? last : -1
      const added = addRequestId(headersAt >= 0 ? (rest[headersAt] as Headers) : undefined, this.requestId)
      this.cacheStatus = added.cache
      if (headersAt >= 0) rest[headersAt] = added.headers
      else rest.push(added.headers)
      return (super.writeHead as (...args: unknown[]) => this)(status, ...rest)
    }

    // 'close' comes once per response, finished or aborted; seeing it here costs no listener per request.
    override emit(event: string | symbol, ...args: unknown[]): boolean {
      if (event === 'close' && this.observedSince >= 0) this.observed()
      return super.emit(event, ...args)
    }

    private observed(): void {
      const seconds = (performance.now() - this.observedSince) / 1000
      this.observedSince = -1
      const request = this.req
      const status = this.statusCode
      const url = request.url ?? '/'
      const query = url.indexOf('?')
      metrics?.observe(
        routeOf(query < 0 ? url : url.slice(0, query)),
        request.method ?? 'GET',
        status,
        seconds,
        this.cacheStatus,
      )
      access?.({
        method: request.method ?? '',
        path: url.length > 2048 ? url.slice(0, 2048) : url,
        status,
        bytes: this.peer.bytesWritten - this.bytesBefore,
        duration_ms: Math.round(seconds * 1e6) / 1e3,
        client: clientOf(request),
        cache: this.cacheStatus,
        request_id: this.requestId,
        aborted: this.writableFinished ? undefined : true,
      })
    }
  }
  return ObservedResponse as typeof ServerResponse
}
