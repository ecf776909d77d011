/**
 * The h3 application: the routing table, put together from its parts. The
 * envelope every REST response shares (method rules, CORS preflight, rate
 * limit, version header) is in rest-envelope.ts, the fast path for single
 * jobs and v1 pages in fast-path.ts, the unlimited endpoints in documents.ts
 * (/openapi.yaml, /docs, /) and operations.ts (/health, /ready, /metrics),
 * and what no route matched in not-found.ts. Handlers stay thin.
 */
import type { IncomingMessage } from 'node:http'
import { H3 } from 'h3'
import type { Config } from '../../core/config.ts'
import { resolveClient, trustedProxyMatcher } from '../http/client-id.ts'
import type { PrimaryLimitClient } from '../http/primary-limiter.ts'
import type { SlidingWindowLimiter, TokenBucketLimiter } from '../http/rate-limit.ts'
import type { SharedLimitStore } from '../http/redis-limiter.ts'
import type { MaybePromise, Reply } from '../http/respond.ts'
import { ResponseCache } from '../http/response-cache.ts'
import type { GcPauses } from '../ops/gc-pauses.ts'
import type { Logger } from '../ops/log.ts'
import { handleV2Changes } from '../routes/changes.ts'
import { handleV2Companies, handleV2Company } from '../routes/companies.ts'
import { handleV2ExportFile, handleV2Exports } from '../routes/exports.ts'
import { handleFeed } from '../routes/feeds.ts'
import { handleV2Filters } from '../routes/filters.ts'
import { handleV1List } from '../routes/v1.ts'
import { handleV2Job, handleV2List } from '../routes/v2.ts'
import type { SnapshotHolder } from '../snapshot/holder.ts'
import { canonicalPath } from '../http/canonical-path.ts'
import { addDocsRoutes, addOpenApiRoute } from './documents.ts'
import { fastPath } from './fast-path.ts'
import { redirectTo, spelledPathOf } from './methods.ts'
import { addNotFoundRoute } from './not-found.ts'
import { addOperationalRoutes } from './operations.ts'
import { rateGates } from './rate-gates.ts'
import { restEnvelope } from './rest-envelope.ts'

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
  /** Imports what the app otherwise imports on first use (the MCP endpoint), so that no request waits for it. */
  warmUp(): Promise<void>
}

export function createApp(deps: AppDependencies): JobsnapApp {
  const { config, snapshots } = deps
  const clock = deps.clock ?? Date.now
  const log = deps.log ?? (() => {})
  const isTrusted = trustedProxyMatcher(config.JOBSNAP_TRUST_PROXY)
  const { restLimiter, mcpLimiter, restGate, mcpGate } = rateGates(config, deps.sharedLimits, deps.primaryLimits)
  const responseCache = new ResponseCache(config.JOBSNAP_CACHE_MB * 1024 * 1024, config.JOBSNAP_CACHE_TTL)
  const clientOf = (request: Request) =>
    resolveClient((request as Request & { ip?: string }).ip, request.headers.get('x-forwarded-for'), isTrusted)

  // The MCP endpoint (the SDK, its request schemas and validator) is imported on its first request, or by
  // warmUp once the server is ready: through tsx it was ~0.4 s of CPU of every worker's start before ready.
  let mcp: Promise<typeof import('../mcp/endpoint.ts')> | undefined
  const loadMcp = () => {
    mcp ??= import('../mcp/endpoint.ts')
    return mcp
  }

  const envelope = restEnvelope({ config, snapshots, clock, log, restGate, responseCache, clientOf })
  const { rest } = envelope
  const app = new H3({ onError: envelope.onError })

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

  app.all('/api/mcp', async (event) => {
    // The router also matches /api/mcp/ and /api/mcp//: redirected (method and body kept) like any other spelling;
    // a preflight cannot follow a redirect, so it is answered whatever the spelling.
    const canonical = event.req.method === 'OPTIONS' ? undefined : canonicalPath(spelledPathOf(event))
    if (canonical) return redirectTo(canonical.path + event.url.search)
    const { handleMcpRequest } = await loadMcp()
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

  addOpenApiRoute(app, config, snapshots)
  addOperationalRoutes(app, {
    config,
    snapshots,
    clock,
    gcPauses: deps.gcPauses,
    metrics: deps.metrics,
    draining: deps.draining,
  })
  addDocsRoutes(app, config)
  addNotFoundRoute(app, envelope)

  const precomputed = fastPath(envelope, snapshots, isTrusted)
  const warmUp = () => loadMcp().then(() => undefined)
  return { app, restLimiter, mcpLimiter, responseCache, clientOf, precomputed, warmUp }
}
