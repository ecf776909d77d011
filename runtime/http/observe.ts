/**
 * Every request, seen once at the Node level where its whole life is
 * visible (precomputed answers, computed ones, and the 400s refused before
 * routing): an `X-Request-Id` echoed or made, then, when the response is
 * done, one access-log line and the metrics.
 */
import { randomUUID } from 'node:crypto'
import type { IncomingMessage, OutgoingHttpHeader, OutgoingHttpHeaders, ServerResponse } from 'node:http'
import type { AccessLine } from '../log.ts'
import { routeOf, type Metrics } from '../metrics.ts'

/** An id a client (or the proxy in front) sent is kept when it is a plain token; anything else is replaced. */
const CLIENT_REQUEST_ID = /^[\w.:@/+=-]{1,128}$/

export interface RequestObserver {
  access?: (line: AccessLine) => void
  metrics?: Metrics
  clientOf(request: IncomingMessage): string
}

type Headers = OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined

/** `headers` with X-Request-Id added, in the shape it came (srvx passes pairs or a flat list). Never mutates it: it may be a shared, precomputed list. */
function addRequestId(headers: Headers, id: string): { headers: Headers; cache?: string } {
  if (headers === undefined) return { headers: { 'x-request-id': id } }
  if (!Array.isArray(headers))
    return { headers: { ...headers, 'x-request-id': id }, cache: String(headers['x-cache'] ?? '') || undefined }
  let cache: string | undefined
  if (Array.isArray(headers[0])) {
    for (const pair of headers as unknown as [string, string][]) if (pair[0] === 'x-cache') cache = pair[1]
    return { headers: [...headers, ['x-request-id', id]] as unknown as OutgoingHttpHeader[], cache }
  }
  for (let i = 0; i < headers.length; i += 2) if (headers[i] === 'x-cache') cache = String(headers[i + 1])
  return { headers: [...headers, 'x-request-id', id], cache }
}

/** Starts watching one request; call before the app sees it. */
export function observeRequest(request: IncomingMessage, response: ServerResponse, observer: RequestObserver): void {
  const started = performance.now()
  const socket = request.socket
  const bytesBefore = socket.bytesWritten
  const sent = request.headers['x-request-id']
  const id = typeof sent === 'string' && CLIENT_REQUEST_ID.test(sent) ? sent : randomUUID()
  let cacheStatus: string | undefined

  const writeHead = response.writeHead
  response.writeHead = function (this: ServerResponse, status: number, ...rest: unknown[]) {
    const last = rest.length - 1
    const headersAt = last >= 0 && typeof rest[last] === 'object' ? last : -1
    const added = addRequestId(headersAt >= 0 ? (rest[headersAt] as Headers) : undefined, id)
    cacheStatus = added.cache
    if (headersAt >= 0) rest[headersAt] = added.headers
    else rest.push(added.headers)
    return (writeHead as (...args: unknown[]) => ServerResponse).call(this, status, ...rest)
  } as ServerResponse['writeHead']

  response.once('close', () => {
    const seconds = (performance.now() - started) / 1000
    const status = response.statusCode
    const url = request.url ?? '/'
    const query = url.indexOf('?')
    observer.metrics?.observe(
      routeOf(query < 0 ? url : url.slice(0, query)),
      request.method ?? 'GET',
      status,
      seconds,
      cacheStatus,
    )
    observer.access?.({
      method: request.method ?? '',
      path: url.length > 2048 ? url.slice(0, 2048) : url,
      status,
      bytes: socket.bytesWritten - bytesBefore,
      duration_ms: Math.round(seconds * 1e6) / 1e3,
      client: observer.clientOf(request),
      ...(cacheStatus ? { cache: cacheStatus } : {}),
      request_id: id,
      ...(response.writableFinished ? {} : { aborted: true as const }),
    })
  })
}
