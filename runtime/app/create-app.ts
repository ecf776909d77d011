/**
 * The h3 application: routing, the per-request envelope every REST response
 * shares (method rules, CORS preflight, rate limit, version header), and the
 * unlimited endpoints (/openapi.yaml, /docs, /health). Handlers stay thin.
 */
import type { IncomingMessage } from 'node:http'
import { H3, type H3Event, HTTPError } from 'h3'
import { type Config, REST_WINDOW_SECONDS } from '../../core/config.ts'
import { UNDECODABLE_PATH } from '../../core/params.ts'
import { snapshotPaths } from '../../core/snapshot.ts'
import { addressMatcher, peerMatches, resolveClient, trustedProxyMatcher } from '../http/client-id.ts'
import { filePayload, storedPayload } from '../http/payload.ts'
import { contentHash } from '../../core/content-hash.ts'
import { PrimaryLimiter, type PrimaryLimitClient } from '../http/primary-limiter.ts'
import {
  limitersFor,
  type RateDecision,
  rateLimitHeaders,
  type SlidingWindowLimiter,
  type TokenBucketLimiter,
} from '../http/rate-limit.ts'
import {
  RedisSlidingWindowLimiter,
  RedisTokenBucketLimiter,
  type Limiter,
  type SharedLimitStore,
} from '../http/redis-limiter.ts'
import { errorReply, httpError, replyForHttpError } from '../http/errors.ts'
import {
  type HeaderList,
  type MaybePromise,
  type Reply,
  replyResponse,
  type RequestLike,
  sendPayload,
  withCommonHeaders,
} from '../http/respond.ts'
import { canonicalPath, isDecodablePath } from '../http/canonical-path.ts'
import { ResponseCache } from '../http/response-cache.ts'
import { type RestContext, snapshotModifiedAt } from '../routes/context.ts'
import { edgeHeaders } from '../http/edge-headers.ts'
import { DOCS_TAG } from '../../core/cache-tags.ts'
import { handleV2Changes } from '../routes/changes.ts'
import { handleV2Companies, handleV2Company } from '../routes/companies.ts'
import { handleV2ExportFile, handleV2Exports } from '../routes/exports.ts'
import { handleDocs } from '../routes/docs.ts'
import { handleFeed } from '../routes/feeds.ts'
import { handleV2Filters } from '../routes/filters.ts'
import { handleMcpRequest } from '../mcp/endpoint.ts'
import { handleV1List } from '../routes/v1.ts'
import { handleV2Job, handleV2List } from '../routes/v2.ts'
import type { GcPauses } from '../ops/gc-pauses.ts'
import type { Logger } from '../ops/log.ts'
import type { SnapshotHolder } from '../snapshot/holder.ts'
import { FastResponse, FastURL } from 'srvx'
import { SLUG_PATTERN } from '../../core/schema/dataset.ts'

const READ_METHODS = new Set(['GET', 'HEAD'])
const ALLOW = 'GET, HEAD, OPTIONS'

export interface AppDependencies {
  config: Config
  snapshots: SnapshotHolder
  /** Injectable clock for tests of expiry and rate windows. */
  clock?: () => number
  log?: Logger
  /** When set, both rate buckets live in Redis (shared by every replica). */
  sharedLimits?: SharedLimitStore
  /** When set (a cluster worker without Redis), both rate buckets live in the cluster's primary. */
  primaryLimits?: PrimaryLimitClient
  /** The process's garbage-collection pauses, reported on /health when given. */
  gcPauses?: GcPauses
  /** Serves /metrics when given: the Prometheus text (the whole cluster's, in a worker). */
  metrics?: { text(): Promise<string>; contentType: string }
  /** True once SIGTERM has started the drain: /ready answers 503 so load balancers stop sending. */
  draining?: () => boolean
}

export interface JobsnapApp {
  app: H3
  restLimiter: SlidingWindowLimiter
  mcpLimiter: TokenBucketLimiter
  responseCache: ResponseCache
  clientOf(request: Request): string
  /**
   * The precomputed answers (a single job, a v1 page) for a Node request,
   * without the web Request and Response objects and the routing h3 needs:
   * the same envelope (limit, headers), handlers and bytes, at a fraction of
   * the cost per request. Undefined when the request is anything else, decided
   * before any side effect, so h3 then answers it as usual.
   */
  precomputed(request: IncomingMessage): MaybePromise<Reply> | undefined
}

/** A REST request as the envelope sees it, whether h3 routed it or the fast path took it. */
interface RestRequest {
  request: RequestLike
  url: URL
  client: string
  /** The path as the client spelled it, when that may differ from `url`'s (h3 decodes escapes and dot segments). */
  spelledPath?: string
}

const V2_JOB_PREFIX = '/api/v2/jobs/'

/** A single job, its slug read from the path (the fast path takes only plain slugs, so the path is as sent). */
const handleV2JobAtPath = (ctx: RestContext): MaybePromise<Reply> =>
  handleV2Job(ctx, ctx.url.pathname.slice(V2_JOB_PREFIX.length))

function preflightReply(allowMethods: string, extra: HeaderList = []): Reply {
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

const preflight = (allowMethods: string): Response => replyResponse(preflightReply(allowMethods))

/**
 * The request's path as the client sent it: h3's `event.url` has escapes of
 * plain characters decoded and dot segments resolved, so `/api/v2/./jobs`
 * or `/%6Fpenapi.yaml` would look canonical there.
 */
function spelledPathOf(event: H3Event): string {
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
const readOnly =
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
const redirectTo = (location: string): Response =>
  replyResponse({
    status: 308,
    headers: withCommonHeaders([
      ['location', location],
      ['cache-control', 'no-store'],
    ]),
    body: null,
  })

/** A Node request's headers as a web Request's `headers.get` reads them (repeated fields joined, as fetch joins them). */
function nodeHeaders(request: IncomingMessage): RequestLike['headers'] {
  return {
    get(name) {
      const value = request.headers[name]
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value
    },
  }
}

export function createApp(deps: AppDependencies): JobsnapApp {
  const { config, snapshots } = deps
  const clock = deps.clock ?? Date.now
  const log = deps.log ?? (() => {})
  const isTrusted = trustedProxyMatcher(config.JOBSNAP_TRUST_PROXY)
  // The local limiters decide alone, or answer while Redis or the primary does not.
  const { rest: restLimiter, mcp: mcpLimiter } = limitersFor(config)
  const { sharedLimits, primaryLimits } = deps
  const restGate: Limiter = sharedLimits
    ? new RedisSlidingWindowLimiter(sharedLimits, restLimiter)
    : primaryLimits
      ? new PrimaryLimiter(primaryLimits, 'rest', restLimiter)
      : restLimiter
  const mcpGate: Limiter = sharedLimits
    ? new RedisTokenBucketLimiter(sharedLimits, mcpLimiter)
    : primaryLimits
      ? new PrimaryLimiter(primaryLimits, 'mcp', mcpLimiter)
      : mcpLimiter
  const responseCache = new ResponseCache(config.JOBSNAP_CACHE_MB * 1024 * 1024, config.JOBSNAP_CACHE_TTL)
  const clientOf = (request: Request) =>
    resolveClient((request as Request & { ip?: string }).ip, request.headers.get('x-forwarded-for'), isTrusted)

  /** What any error a handler threw is answered with; one that says what the client did wrong is answered as it is. */
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

  const app = new H3({
    onError: (error, event) =>
      HTTPError.isError(error) && error.status === 400 && !isDecodablePath(event.url.pathname)
        ? undecodablePath(event)
        : replyResponse(replyForError(event.req.method, event.url.pathname, error)),
  })

  /**
   * The shared envelope of every REST answer: method rules, CORS preflight,
   * rate limit, version and snapshot headers. Synchronous when the limiter
   * and the handler are (a single job or a v1 page counted locally); errors
   * are thrown, in the same turn or as a rejection.
   */
  const restReply = (
    version: 'v1' | 'v2',
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

  const restPreflight = (version: 'v1' | 'v2', standing: RateDecision): Reply =>
    preflightReply(ALLOW, [...rateLimitHeaders('rest', standing, REST_WINDOW_SECONDS), ['x-api-version', version]])

  const afterLimit = (
    version: 'v1' | 'v2',
    handler: (ctx: RestContext) => MaybePromise<Reply>,
    { request, url, spelledPath }: RestRequest,
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
    const canonical = decision.allowed ? canonicalPath(spelledPath ?? url.pathname) : undefined
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

  /** A REST route for h3: the envelope around `handler`, answered as a Response. */
  const rest =
    (version: 'v1' | 'v2', handler: (ctx: RestContext, event: H3Event) => MaybePromise<Reply>) =>
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

  const precomputed = (request: IncomingMessage): MaybePromise<Reply> | undefined => {
    const method = request.method
    if ((method !== 'GET' && method !== 'HEAD') || !snapshots.loaded) return undefined
    const target = request.url ?? ''
    // No closure made per request on this path: under tsx each would also get its name by a defineProperty call
    // (esbuild's keepNames).
    let version: 'v1' | 'v2'
    let handler: (ctx: RestContext) => MaybePromise<Reply>
    if (target.startsWith(V2_JOB_PREFIX)) {
      // Only a plain slug (no query, no further segment, nothing encoded): anything else takes h3's route.
      if (!SLUG_PATTERN.test(target.slice(V2_JOB_PREFIX.length))) return undefined
      version = 'v2'
      handler = handleV2JobAtPath
    } else if (target === '/api/v1' || target.startsWith('/api/v1?')) {
      version = 'v1'
      handler = handleV1List
    } else return undefined
    // Origin-form, parsed lazily; neither handler reads the host.
    const url = new FastURL(target)
    const client = resolveClient(
      request.socket.remoteAddress,
      (request.headers['x-forwarded-for'] as string | undefined) ?? null,
      isTrusted,
    )
    try {
      const reply = restReply(version, handler, { request: { method, headers: nodeHeaders(request) }, url, client })
      return reply instanceof Promise
        ? reply.catch((error: unknown) => replyForError(method, url.pathname, error))
        : reply
    } catch (error) {
      return replyForError(method, url.pathname, error)
    }
  }

  app.all(
    '/api/v1',
    rest('v1', (ctx) => handleV1List(ctx)),
  )
  app.all(
    '/api/v2/jobs',
    rest('v2', (ctx) => handleV2List(ctx)),
  )
  app.all(
    '/api/v2/filters',
    rest('v2', (ctx) => handleV2Filters(ctx)),
  )
  app.all(
    '/api/v2/changes',
    rest('v2', (ctx) => handleV2Changes(ctx)),
  )
  app.all(
    '/api/v2/exports',
    rest('v2', (ctx) => handleV2Exports(ctx)),
  )
  app.all(
    '/api/v2/exports/:name',
    rest('v2', (ctx, event) => handleV2ExportFile(ctx, event.context.params?.name ?? '')),
  )
  app.all(
    '/api/v2/companies',
    rest('v2', (ctx) => handleV2Companies(ctx)),
  )
  app.all(
    '/api/v2/companies/:slug',
    rest('v2', (ctx, event) => handleV2Company(ctx, event.context.params?.slug ?? '')),
  )
  app.all(
    '/api/v2/jobs/:slug',
    rest('v2', (ctx, event) => handleV2Job(ctx, event.context.params?.slug ?? '')),
  )

  for (const format of ['rss', 'atom', 'json'] as const)
    app.all(
      `/feeds/jobs.${format}`,
      rest('v2', (ctx) => handleFeed(ctx, format)),
    )

  app.all('/api/mcp', (event) => {
    // The router also matches /api/mcp/ and /api/mcp//: redirected (method and body kept) like any other spelling;
    // a preflight cannot follow a redirect, so it is answered whatever the spelling.
    const canonical = event.req.method === 'OPTIONS' ? undefined : canonicalPath(spelledPathOf(event))
    if (canonical) return redirectTo(canonical.path + event.url.search)
    return handleMcpRequest(event.req, {
      config,
      // Before the first load the endpoint answers in JSON-RPC that the server is starting.
      snapshot: snapshots.loaded ? snapshots.current : undefined,
      limiter: mcpGate,
      bucket: mcpLimiter,
      client: clientOf(event.req),
      now: clock(),
    })
  })

  app.all('/openapi.yaml', async (event) => {
    const request = event.req
    // A preflight cannot follow a redirect: answered whatever the spelling.
    if (request.method === 'OPTIONS') return preflight(ALLOW)
    // The router also matches /openapi.yaml/: that spelling is redirected, as the API's are.
    const canonical = canonicalPath(spelledPathOf(event))
    if (canonical) return redirectTo(canonical.path + event.url.search)
    if (!READ_METHODS.has(request.method))
      throw httpError(405, 'Only GET and HEAD are allowed.', { headers: [['allow', ALLOW]] })
    const snapshot = snapshots.current
    const body = await snapshot.readPublic(snapshotPaths.openapi)
    const hash = snapshot.manifest.files[snapshotPaths.openapi]
    if (!body || !hash) throw httpError(503, `Snapshot ${snapshot.id} lacks its OpenAPI document; rebuild it.`)
    const payload = filePayload(
      body,
      hash,
      (encoding) => snapshot.readPublic(snapshotPaths.openapi, encoding),
      'application/yaml; charset=utf-8',
    )
    return sendPayload(request, payload, {
      cacheStatus: 'HIT',
      maxAgeSeconds: config.JOBSNAP_CACHE_TTL,
      lastModified: snapshotModifiedAt(snapshot),
      edge: edgeHeaders(config, [DOCS_TAG]),
    })
  })

  /** A small JSON answer for the operational endpoints: never cached, HEAD announces GET's length. */
  const operational = (request: Request, status: number, body: unknown, extra: [string, string][] = []) => {
    const bytes = Buffer.from(JSON.stringify(body))
    return new FastResponse(request.method === 'HEAD' ? null : bytes, {
      status,
      headers: withCommonHeaders([
        ['content-type', 'application/json; charset=utf-8'],
        ['content-length', String(bytes.length)],
        ['cache-control', 'no-store'],
        ...extra,
      ]),
    })
  }

  // Liveness: 200 whenever the process answers, `starting` until the first snapshot has loaded.
  app.all(
    '/health',
    readOnly((event) => {
      if (!snapshots.loaded) return operational(event.req, 200, { status: 'starting', pid: process.pid })
      const snapshot = snapshots.current
      const now = clock()
      const body = {
        status: 'ok',
        snapshot_id: snapshot.id,
        built_at: snapshot.manifest.built_at,
        age_seconds: Math.max(0, Math.round((now - Date.parse(snapshot.manifest.built_at)) / 1000)),
        live_jobs: snapshot.jobs.size,
        companies: snapshot.companies.length,
        // Which process answered: with --workers N, each worker is its own process.
        pid: process.pid,
        ...(deps.gcPauses
          ? {
              gc: {
                longest_pause_ms: Math.round(deps.gcPauses.longestMs() * 100) / 100,
                collections: deps.gcPauses.collections(),
              },
            }
          : {}),
      }
      return operational(event.req, 200, body)
    }),
  )

  // Readiness, for a load balancer: 503 until the first snapshot has loaded and from SIGTERM on (the drain).
  app.all(
    '/ready',
    readOnly((event) => {
      const unready = !snapshots.loaded
        ? 'starting: the first snapshot is still loading'
        : deps.draining?.()
          ? 'draining: shutting down after SIGTERM; send new requests elsewhere'
          : undefined
      if (unready)
        return operational(event.req, 503, { error: { code: 503, message: `Not ready: ${unready}.` } }, [
          ['retry-after', '2'],
          ['x-cache', 'BYPASS'],
        ])
      return operational(event.req, 200, { status: 'ready', snapshot_id: snapshots.current.id, pid: process.pid })
    }),
  )

  const { metrics } = deps
  if (metrics) {
    const allowed = addressMatcher('JOBSNAP_METRICS_ALLOW', config.JOBSNAP_METRICS_ALLOW)
    // The TCP peer, never X-Forwarded-For: a proxy in front must not open metrics to the world (see deploy/nginx.conf).
    // A proxy on loopback is an allowed peer, so a request it forwards on behalf of someone else is refused too.
    app.all('/metrics', async (event) => {
      const request = event.req
      // The router also matches /metrics/: one spelling, so a front that blocks /metrics blocks every way in.
      const canonical = canonicalPath(spelledPathOf(event))
      if (canonical) return redirectTo(canonical.path + event.url.search)
      if (!peerMatches((request as Request & { ip?: string }).ip, allowed))
        throw httpError(403, 'Metrics are served only to the addresses in JOBSNAP_METRICS_ALLOW.')
      if (request.headers.has('x-forwarded-for') || request.headers.has('forwarded'))
        throw httpError(403, 'Metrics are not served through a proxy: scrape the jobsnap port directly.')
      if (!READ_METHODS.has(request.method))
        throw httpError(405, 'Only GET and HEAD are allowed.', { headers: [['allow', 'GET, HEAD']] })
      const text = Buffer.from(await metrics.text())
      return new FastResponse(request.method === 'HEAD' ? null : text, {
        headers: withCommonHeaders([
          ['content-type', metrics.contentType],
          ['content-length', String(text.length)],
          ['cache-control', 'no-store'],
        ]),
      })
    })
  }

  app.all(
    '/docs/**',
    readOnly((event) => {
      const response = handleDocs(event.req, event.url.pathname, config)
      if (!response) throw httpError(404, 'No such documentation file.')
      return response
    }),
  )
  app.all(
    '/docs',
    readOnly((event) => handleDocs(event.req, '/docs', config)!),
  )

  const index = Buffer.from(
    JSON.stringify({
      name: 'jobsnap',
      description: 'Every live job posting as JSON. Read-only, no authentication.',
      endpoints: {
        v2_list: '/api/v2/jobs',
        v2_job: '/api/v2/jobs/{slug}',
        v2_filters: '/api/v2/filters',
        v2_changes: '/api/v2/changes?since={snapshot_id}',
        v2_exports: '/api/v2/exports',
        feeds: ['/feeds/jobs.rss', '/feeds/jobs.atom', '/feeds/jobs.json'],
        v2_companies: '/api/v2/companies',
        v2_company: '/api/v2/companies/{slug}',
        v1_list: '/api/v1',
        mcp: '/api/mcp',
        openapi: '/openapi.yaml',
        docs: '/docs',
        health: '/health',
        ready: '/ready',
      },
    }),
  )
  // Cached, tagged and compressed like every other successful body (HEAD announces GET's length).
  const indexPayload = storedPayload(index, contentHash(index))
  app.all(
    '/',
    readOnly((event) =>
      sendPayload(event.req, indexPayload, {
        cacheStatus: 'HIT',
        maxAgeSeconds: config.JOBSNAP_CACHE_TTL,
        edge: edgeHeaders(config, []),
      }),
    ),
  )

  app.all('/**', (event) => {
    const { pathname } = event.url
    // Another spelling of a REST path (/API/V1, //api/v1) is that path's, redirected by its envelope.
    const canonical = canonicalPath(spelledPathOf(event))
    if (canonical?.version)
      return rest(canonical.version, () => {
        throw new Error('unreachable: the envelope redirects another spelling before the handler runs')
      })(event)
    if (canonical) return redirectTo(canonical.path + event.url.search)
    const notFound = (ctx?: RestContext) => {
      throw httpError(404, `No endpoint at ${pathname.slice(0, 200)}. See /openapi.yaml or /docs.`, {
        headers: ctx?.headers,
      })
    }
    // Under /api/v1 and /api/v2 a 404 is a v1 or v2 answer like any other: counted, with the rate-limit headers.
    const [first, second] = pathname.split('/').filter(Boolean)
    const version =
      first?.toLowerCase() === 'api' && /^v[12]$/i.test(second ?? '')
        ? (second!.toLowerCase() as 'v1' | 'v2')
        : undefined
    return version ? rest(version, notFound)(event) : notFound()
  })

  return { app, restLimiter, mcpLimiter, responseCache, clientOf, precomputed }
}
