/**
 * The shared envelope of every REST answer, v1 and v2, whether h3 routed the
 * request or the fast path took it: method rules, CORS preflight, the rate
 * limit, one spelling per resource, version and snapshot headers, and what a
 * thrown error is answered with. Made once per app; nothing here is made per
 * request beyond what each answer needs.
 */
import { type H3Event, HTTPError } from 'h3'
import { type Config, REST_WINDOW_SECONDS } from '../../core/config.ts'
import { UNDECODABLE_PATH } from '../../core/params.ts'
import { canonicalPath, isDecodablePath } from '../http/canonical-path.ts'
import { errorReply, httpError, replyForHttpError } from '../http/errors.ts'
import { type RateDecision, rateLimitHeaders } from '../http/rate-limit.ts'
import type { Limiter } from '../http/redis-limiter.ts'
import {
  type HeaderList,
  type MaybePromise,
  type Reply,
  replyResponse,
  type RequestLike,
  withCommonHeaders,
} from '../http/respond.ts'
import type { ResponseCache } from '../http/response-cache.ts'
import type { Logger } from '../ops/log.ts'
import type { RestContext } from '../routes/context.ts'
import type { SnapshotHolder } from '../snapshot/holder.ts'
import { ALLOW, preflightReply, READ_METHODS, spelledPathOf } from './methods.ts'

type ApiVersion = 'v1' | 'v2'

/** A REST request as the envelope sees it, whether h3 routed it or the fast path took it. */
interface RestRequest {
  request: RequestLike
  url: URL
  client: string
  /** The path as the client spelled it, when that may differ from `url`'s (h3 decodes escapes and dot segments). */
  spelledPath?: string
  /** True when the path is known to be its canonical spelling (the fast path takes no other): not checked again. */
  canonical?: boolean
}

export interface EnvelopeDependencies {
  config: Config
  snapshots: SnapshotHolder
  clock: () => number
  log: Logger
  restGate: Limiter
  responseCache: ResponseCache
  clientOf(request: Request): string
}

export interface RestEnvelope {
  /**
   * The envelope around `handler`. Synchronous when the limiter and the
   * handler are (a single job or a v1 page counted locally); errors are
   * thrown, in the same turn or as a rejection.
   */
  restReply(
    version: ApiVersion,
    handler: (ctx: RestContext) => MaybePromise<Reply>,
    rest: RestRequest,
  ): MaybePromise<Reply>
  /** A REST route for h3: the envelope around `handler`, answered as a Response. */
  rest(
    version: ApiVersion,
    handler: (ctx: RestContext, event: H3Event) => MaybePromise<Reply>,
  ): (event: H3Event) => Promise<Response>
  /** What any error a handler threw is answered with; one that says what the client did wrong is answered as it is. */
  replyForError(method: string, pathname: string, error: unknown): Reply
  /** h3's error hook: a path it cannot percent-decode, or any other error. */
  onError(error: unknown, event: H3Event): Response | Promise<Response>
}

export function restEnvelope(deps: EnvelopeDependencies): RestEnvelope {
  const { config, snapshots, clock, log, restGate, responseCache, clientOf } = deps

  const replyForError = (method: string, pathname: string, error: unknown): Reply => {
    if (HTTPError.isError(error) && !error.unhandled) return replyForHttpError(method, error)
    const cause = HTTPError.isError(error) && error.cause instanceof Error ? error.cause : error
    log('request failed', { path: pathname, error: cause instanceof Error ? cause.stack : String(cause) }, 'error')
    // h3's own refusals (a malformed URL, say) keep their 4xx; anything unexpected is a bare 500.
    const status = HTTPError.isError(error) && error.status >= 400 && error.status < 500 ? error.status : 500
    const message = status === 500 ? 'Internal error; it has been logged.' : (error as Error).message
    return errorReply(method, status, message)
  }

  /**
   * h3 refuses a path it cannot percent-decode before routing, with a bare
   * 400. On a REST path it is counted and answered as any bad parameter is:
   * the envelope's headers, and `field` naming the slug (or the path). An
   * OPTIONS gets the same 400 (no request to that path can succeed), not
   * counted, as no preflight is.
   */
  const undecodablePath = async (event: H3Event): Promise<Response> => {
    const { pathname } = event.url
    const field = /^\/api\/v2\/(jobs|companies)\/[^/]*$/.test(pathname) ? 'slug' : 'path'
    const version = pathname.startsWith('/api/v1') ? 'v1' : pathname.startsWith('/api/v2') ? 'v2' : undefined
    if (!version) return replyResponse(errorReply(event.req.method, 400, UNDECODABLE_PATH, { field }))
    if (event.req.method === 'OPTIONS') {
      const standing = await restGate.peek(clientOf(event.req), clock())
      const headers: HeaderList = [
        ...rateLimitHeaders('rest', standing, REST_WINDOW_SECONDS),
        ['x-api-version', version],
      ]
      return replyResponse(errorReply('OPTIONS', 400, UNDECODABLE_PATH, { field, headers }))
    }
    return rest(version, (ctx) => {
      throw httpError(400, UNDECODABLE_PATH, { field, headers: ctx.headers })
    })(event).catch((error: unknown) => replyResponse(replyForError(event.req.method, pathname, error)))
  }

  const onError = (error: unknown, event: H3Event): Response | Promise<Response> =>
    HTTPError.isError(error) && error.status === 400 && !isDecodablePath(event.url.pathname)
      ? undecodablePath(event)
      : replyResponse(replyForError(event.req.method, event.url.pathname, error))

  const restReply = (
    version: ApiVersion,
    handler: (ctx: RestContext) => MaybePromise<Reply>,
    rest: RestRequest,
  ): MaybePromise<Reply> => {
    // A preflight is not counted, but says where the client stands, as every v1 and v2 answer does.
    if (rest.request.method === 'OPTIONS') {
      // No request to a path that cannot be decoded can succeed: its preflight gets GET's 400 (undecodablePath).
      if (!isDecodablePath(rest.url.pathname)) throw httpError(400, UNDECODABLE_PATH)
      const standing = restGate.peek(rest.client, clock())
      return standing instanceof Promise
        ? standing.then((decided) => restPreflight(version, decided))
        : restPreflight(version, standing)
    }
    // Every other answer on a REST path, 405 and 308 included, counts against the client's limit and says so.
    const now = clock()
    const decision = restGate.hit(rest.client, now)
    return decision instanceof Promise
      ? decision.then((decided) => afterLimit(version, handler, rest, now, decided))
      : afterLimit(version, handler, rest, now, decision)
  }

  const restPreflight = (version: ApiVersion, standing: RateDecision): Reply =>
    preflightReply(ALLOW, [...rateLimitHeaders('rest', standing, REST_WINDOW_SECONDS), ['x-api-version', version]])

  const afterLimit = (
    version: ApiVersion,
    handler: (ctx: RestContext) => MaybePromise<Reply>,
    { request, url, spelledPath, canonical: known }: RestRequest,
    now: number,
    decision: RateDecision,
  ): MaybePromise<Reply> => {
    const headers = rateLimitHeaders('rest', decision, REST_WINDOW_SECONDS)
    headers.push(['x-api-version', version])
    if (decision.allowed && !READ_METHODS.has(request.method)) {
      headers.push(['allow', ALLOW])
      throw httpError(405, `Method ${request.method} is not allowed; this API is read-only (GET, HEAD).`, {
        headers,
      })
    }
    // One spelling per resource: another (a trailing slash, say) is redirected to the canonical path, query kept.
    const canonical = decision.allowed && !known ? canonicalPath(spelledPath ?? url.pathname) : undefined
    if (canonical) {
      headers.push(['location', canonical.path + url.search])
      return { status: 308, headers: withCommonHeaders(headers, [['cache-control', 'no-store']]), body: null }
    }
    if (!decision.allowed) {
      headers.push(['retry-after', String(decision.resetSeconds)])
      throw httpError(
        429,
        `Rate limit exceeded: ${decision.limit} requests per minute per client across v1 and v2. Retry in ${decision.resetSeconds} s.`,
        { headers },
      )
    }
    // One snapshot per request, named in the response so clients and tests can tell which one answered.
    const snapshot = snapshots.current
    headers.push(['x-snapshot-id', snapshot.id])
    return handler({ request, url, snapshot, responseCache, config, now, headers })
  }

  const rest =
    (version: ApiVersion, handler: (ctx: RestContext, event: H3Event) => MaybePromise<Reply>) =>
    async (event: H3Event) =>
      replyResponse(
        await restReply(version, (ctx) => handler(ctx, event), {
          request: event.req,
          url: event.url,
          client: clientOf(event.req),
          // `%61cme` or `/./` reach h3's routes resolved: such spellings are redirected like any other.
          spelledPath: spelledPathOf(event),
        }),
        event.runtime?.node?.res,
      )

  return { restReply, rest, replyForError, onError }
}
