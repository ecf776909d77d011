/**
 * Prometheus metrics (prom-client): what an operator scrapes to see
 * traffic, latency, the response cache, rate-limit refusals, the snapshot
 * being served and the process itself (event-loop lag, GC, memory).
 *
 * With --workers N each worker counts its own requests and the primary adds
 * them up on a scrape (prom-client's AggregatorRegistry over the cluster's
 * IPC channel), so one scrape of any worker covers them all.
 */
import cluster from 'node:cluster'
import client from 'prom-client'

/** What the snapshot gauges read at scrape time. */
export interface MetricsSources {
  /** The snapshot served, or undefined while the first one loads. */
  snapshot(): { id: string; builtAt: string; liveJobs: number } | undefined
  /** Redis state, when limits are shared through Redis. */
  redisConnected?(): boolean
  /** 1 when /ready answers 200. */
  ready(): boolean
}

/** The route a request path belongs to: a bounded label set, whatever clients send. */
export function routeOf(pathname: string): string {
  const path = pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname
  if (path.startsWith('/api/v2/jobs/')) return '/api/v2/jobs/{slug}'
  if (path.startsWith('/api/v2/companies/')) return '/api/v2/companies/{slug}'
  if (path.startsWith('/docs')) return '/docs'
  return KNOWN_ROUTES.has(path) ? path : 'other'
}

const KNOWN_ROUTES = new Set([
  '/',
  '/api/v1',
  '/api/v2/jobs',
  '/api/v2/companies',
  '/api/v2/filters',
  '/api/v2/changes',
  '/feeds/jobs.rss',
  '/feeds/jobs.atom',
  '/feeds/jobs.json',
  '/api/mcp',
  '/openapi.yaml',
  '/health',
  '/ready',
  '/metrics',
])

/** Latency buckets, seconds: precomputed answers take well under a millisecond, a cold 1M-job query tens of ms. */
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

export class Metrics {
  readonly registry = new client.Registry()
  private readonly requests = new client.Counter({
    name: 'jobsnap_http_requests_total',
    help: 'HTTP requests answered, by route, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  })
  private readonly duration = new client.Histogram({
    name: 'jobsnap_http_request_duration_seconds',
    help: 'Time from the request arriving to the last byte of the response being handed to the socket, by route.',
    labelNames: ['route'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  })
  private readonly cache = new client.Counter({
    name: 'jobsnap_response_cache_total',
    help: 'Responses by X-Cache: HIT (precomputed or cached), MISS (computed now), BYPASS (errors, uncacheable).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  })
  private readonly refused = new client.Counter({
    name: 'jobsnap_rate_limited_total',
    help: 'Requests refused with 429, by rate limit (rest: v1 and v2 together; mcp).',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  })
  private readonly loads = new client.Counter({
    name: 'jobsnap_snapshot_loads_total',
    help: 'Snapshot loads: ok (now served) or failed (refused; the previous one kept serving).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  })

  constructor(sources: MetricsSources) {
    const { registry } = this
    for (const result of ['ok', 'failed']) this.loads.inc({ result }, 0)
    for (const limit of ['rest', 'mcp']) this.refused.inc({ limit }, 0)
    new client.Gauge({
      name: 'jobsnap_snapshot_info',
      help: 'The snapshot served (1 per snapshot_id label; two ids while workers swap).',
      labelNames: ['snapshot_id'] as const,
      aggregator: 'max',
      registers: [registry],
      collect() {
        this.reset()
        const snapshot = sources.snapshot()
        if (snapshot) this.set({ snapshot_id: snapshot.id }, 1)
      },
    })
    new client.Gauge({
      name: 'jobsnap_snapshot_age_seconds',
      help: 'Seconds since the served snapshot was built.',
      aggregator: 'max',
      registers: [registry],
      collect() {
        const snapshot = sources.snapshot()
        if (snapshot) this.set(Math.max(0, (Date.now() - Date.parse(snapshot.builtAt)) / 1000))
      },
    })
    new client.Gauge({
      name: 'jobsnap_live_jobs',
      help: 'Live jobs in the served snapshot.',
      aggregator: 'max',
      registers: [registry],
      collect() {
        this.set(sources.snapshot()?.liveJobs ?? 0)
      },
    })
    new client.Gauge({
      name: 'jobsnap_ready',
      help: '1 when /ready answers 200 (a snapshot is loaded and the process is not draining). Summed over workers.',
      registers: [registry],
      collect() {
        this.set(sources.ready() ? 1 : 0)
      },
    })
    const { redisConnected } = sources
    if (redisConnected)
      new client.Gauge({
        name: 'jobsnap_redis_connected',
        help: '1 while Redis answers the shared rate limits; 0 while requests fall back to local limits.',
        aggregator: 'min',
        registers: [registry],
        collect() {
          this.set(redisConnected() ? 1 : 0)
        },
      })
    // Event-loop lag, GC pauses, memory, CPU, handles: prom-client's standard process metrics.
    client.collectDefaultMetrics({ register: registry })
    if (cluster.isWorker) {
      // Lets the primary's AggregatorRegistry ask this worker for its numbers.
      client.AggregatorRegistry.setRegistries(registry)
      new client.AggregatorRegistry()
    }
  }

  /** Counts one finished request. */
  observe(route: string, method: string, status: number, seconds: number, cacheStatus: string | undefined): void {
    this.requests.inc({ route, method, status })
    this.duration.observe({ route }, seconds)
    if (cacheStatus) this.cache.inc({ result: cacheStatus })
    if (status === 429) this.refused.inc({ limit: route === '/api/mcp' ? 'mcp' : 'rest' })
  }

  snapshotLoaded(ok: boolean): void {
    this.loads.inc({ result: ok ? 'ok' : 'failed' })
  }

  /** This process's metrics, in the Prometheus text format. */
  text(): Promise<string> {
    return this.registry.metrics()
  }

  get contentType(): string {
    return this.registry.contentType
  }
}
