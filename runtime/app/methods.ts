/**
 * The method rules every path shares: GET and HEAD answer, OPTIONS is a CORS
 * preflight (or, bare, a GET), anything else is 405 with Allow. And the two
 * ways a path answers another spelling: a 308 redirect to the canonical one,
 * read from the path as the client spelled it.
 */
import type { H3Event } from 'h3'
import { httpError } from '../http/errors.ts'
import { type HeaderList, type Reply, replyResponse, withCommonHeaders } from '../http/respond.ts'

export const READ_METHODS = new Set(['GET', 'HEAD'])
export const ALLOW = 'GET, HEAD, OPTIONS'

export function preflightReply(allowMethods: string, extra: HeaderList = []): Reply {
  return {
    status: 204,
    headers: withCommonHeaders(
      [
        ['access-control-allow-methods', allowMethods],
        ['access-control-allow-headers', '*'],
        ['access-control-max-age', '86400'],
      ],
      extra,
    ),
    body: null,
  }
}

export const preflight = (allowMethods: string): Response => replyResponse(preflightReply(allowMethods))

/**
 * The request's path as the client sent it: h3's `event.url` has escapes of
 * plain characters decoded and dot segments resolved, so `/api/v2/./jobs`
 * or `/%6Fpenapi.yaml` would look canonical there.
 */
export function spelledPathOf(event: H3Event): string {
  const target = event.runtime?.node?.req?.url
  if (target === undefined) return event.url.pathname
  // Absolute-form (`GET http://host/path`): the path starts after the authority.
  const path = target[0] === '/' ? target : target.replace(/^[a-z][a-z\d+.-]*:\/\/[^/?#]*/i, '')
  const end = path.search(/[?#]/)
  return end < 0 ? path : path.slice(0, end)
}

/**
 * A document route that, like every path here, answers GET and HEAD, a CORS
 * preflight to OPTIONS (a bare OPTIONS as GET), and 405 with Allow to any
 * other method.
 */
export const readOnly =
  (handler: (event: H3Event) => Response | Promise<Response>) =>
  (event: H3Event): Response | Promise<Response> => {
    const { method } = event.req
    // Only a CORS preflight says which method it asks about; a bare OPTIONS (HAProxy's default health
    // check) is answered by the handler, so /ready still says 503 while starting or draining.
    if (method === 'OPTIONS' && event.req.headers.has('access-control-request-method')) return preflight(ALLOW)
    if (!READ_METHODS.has(method) && method !== 'OPTIONS')
      throw httpError(405, `Method ${method} is not allowed; only GET and HEAD are.`, { headers: [['allow', ALLOW]] })
    return handler(event)
  }

/** A permanent redirect that keeps the method (308), for another spelling of an unlimited path. */
export const redirectTo = (location: string): Response =>
  replyResponse({
    status: 308,
    headers: withCommonHeaders([
      ['location', location],
      ['cache-control', 'no-store'],
    ]),
    body: null,
  })
