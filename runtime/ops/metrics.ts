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
  /** Bytes each bounded in-memory cache holds now. */
  cacheBytes?(): Record<'responses' | 'encodings' | 'files', number>
  /** List pages that got a buffer of their own because bytes still being sent filled the ring's way. */
  ringRefusals?(): number
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

/** One route's latencies: counts per bucket (the last is +Inf), their sum and number. */
interface RouteLatency {
  buckets: Float64Array
  sum: number
  count: number
}

/**
 * The latency histogram, kept in plain arrays on the request path (a
 * bucket search and three additions) and handed to prom-client as a
 * histogram when scraped: prom-client's own observe() hashes its labels on
 * every call, which measured ~4 us a request on a bare server here.
 */
class TalliedHistogram extends client.Histogram<'route'> {
  private readonly metricName: string
  private readonly metricHelp: string

  constructor(
    private readonly byRoute: Map<string, RouteLatency>,
    config: { name: string; help: string; registers: client.Registry[] },
  ) {
    super({ ...config, labelNames: ['route'], buckets: DURATION_BUCKETS })
    this.metricName = config.name
    this.metricHelp = config.help
  }

  override async get(): Promise<client.MetricObjectWithValues<client.MetricValueWithName<'route'>>> {
    return this.getForPromString()
  }

  /** What prom-client's registry reads to write the text format. */
  async getForPromString(): Promise<client.MetricObjectWithValues<client.MetricValueWithName<'route'>>> {
    const name = this.metricName
    // The `le` label is prom-client's own for histogram buckets; its types do not list it among ours.
    const values: client.MetricValueWithName<'route'>[] = []
    for (const [route, latency] of this.byRoute) {
      let cumulative = 0
      DURATION_BUCKETS.forEach((bound, i) => {
        cumulative += latency.buckets[i]!
        values.push({ labels: { le: bound, route } as never, value: cumulative, metricName: `${name}_bucket` })
      })
      values.push({
        labels: { le: '+Inf', route } as never,
        value: latency.count,
        metricName: `${name}_bucket`,
      })
      values.push({ labels: { route }, value: latency.sum, metricName: `${name}_sum` })
      values.push({ labels: { route }, value: latency.count, metricName: `${name}_count` })
    }
    return {
      name,
      help: this.metricHelp,
      // prom-client's MetricType is a declared enum with no runtime object; its histogram member is this string.
      type: 'histogram' as unknown as client.MetricType,
      values,
      aggregator: 'sum',
      collect: () => {},
    }
  }
}

/** A counter tallied in a plain Map on the request path and given to prom-client as totals when scraped. */
function talliedCounter<L extends string>(
  registry: client.Registry,
  config: { name: string; help: string; labelNames: readonly L[] },
  tally: Map<string, { labels: Record<L, string>; n: number }>,
): void {
  new client.Counter({
    ...config,
    registers: [registry],
    collect() {
      this.reset()
      for (const { labels, n } of tally.values()) this.inc(labels as client.LabelValues<L>, n)
    },
  })
}

/** Adds one to the tally of `labels`, whose values joined make `key`; gives back the entry counted in. */
function count<L extends string>(
  tally: Map<string, { labels: Record<L, string>; n: number }>,
  key: string,
  labels: () => Record<L, string>,
): { labels: Record<L, string>; n: number } {
  let entry = tally.get(key)
  if (entry) entry.n++
  else {
    entry = { labels: labels(), n: 1 }
    tally.set(key, entry)
  }
  return entry
}

export class Metrics {
  readonly registry = new client.Registry()
  private readonly requests = new Map<string, { labels: Record<'route' | 'method' | 'status', string>; n: number }>()
  private readonly latency = new Map<string, RouteLatency>()
  private readonly cache = new Map<string, { labels: Record<'result', string>; n: number }>()
  private readonly refused = new Map<string, { labels: Record<'limit', string>; n: number }>()
  private readonly loads = new Map<string, { labels: Record<'result', string>; n: number }>()
  /**
   * The requests entry counted last and what it counts: under load most requests follow one of the same
   * route, method and status, and are counted without joining a key and looking it up (~0.3 us).
   */
  private lastRequests:
    | { route: string; method: string; status: number; entry: { labels: Record<string, string>; n: number } }
    | undefined

  constructor(sources: MetricsSources) {
    const { registry } = this
    talliedCounter(
      registry,
      {
        name: 'jobsnap_http_requests_total',
        help: 'HTTP requests answered, by route, method and status.',
        labelNames: ['route', 'method', 'status'],
      },
      this.requests,
    )
    new TalliedHistogram(this.latency, {
      name: 'jobsnap_http_request_duration_seconds',
      help: 'Time from the request arriving to the last byte of the response being handed to the socket, by route.',
      registers: [registry],
    })
    talliedCounter(
      registry,
      {
        name: 'jobsnap_response_cache_total',
        help: 'Responses by X-Cache: HIT (precomputed or cached), MISS (computed now), BYPASS (errors, uncacheable).',
        labelNames: ['result'],
      },
      this.cache,
    )
    talliedCounter(
      registry,
      {
        name: 'jobsnap_rate_limited_total',
        help: 'Requests refused with 429, by rate limit (rest: v1 and v2 together; mcp).',
        labelNames: ['limit'],
      },
      this.refused,
    )
    talliedCounter(
      registry,
      {
        name: 'jobsnap_snapshot_loads_total',
        help: 'Snapshot loads: ok (now served) or failed (refused; the previous one kept serving).',
        labelNames: ['result'],
      },
      this.loads,
    )
    for (const result of ['ok', 'failed']) this.loads.set(result, { labels: { result }, n: 0 })
    for (const limit of ['rest', 'mcp']) this.refused.set(limit, { labels: { limit }, n: 0 })
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
    const { cacheBytes } = sources
    if (cacheBytes)
      new client.Gauge({
        name: 'jobsnap_cache_bytes',
        help: 'Bytes held by each bounded cache: responses (computed bodies, JOBSNAP_CACHE_MB), encodings (compressed copies of snapshot bodies, 64 MB), files (JOBSNAP_FILE_CACHE_MB).',
        labelNames: ['cache'] as const,
        registers: [registry],
        collect() {
          for (const [cache, bytes] of Object.entries(cacheBytes())) this.set({ cache }, bytes)
        },
      })
    const { ringRefusals } = sources
    if (ringRefusals)
      new client.Gauge({
        name: 'jobsnap_response_ring_refusals',
        help: 'Computed list pages that could not be written into the response ring (its next bytes were still being sent to a slow client) and got a buffer of their own, since start. Rising steadily: clients reading slowly, or JOBSNAP_CACHE_MB too small for the load.',
        registers: [registry],
        collect() {
          this.set(ringRefusals())
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

  /** Counts one finished request: a few Map and array updates, no label hashing. */
  observe(route: string, method: string, status: number, seconds: number, cacheStatus: string | undefined): void {
    const last = this.lastRequests
    if (last !== undefined && last.route === route && last.method === method && last.status === status) last.entry.n++
    else {
      const entry = count(this.requests, `${route} ${method} ${status}`, () => ({
        route,
        method,
        status: String(status),
      }))
      this.lastRequests = { route, method, status, entry }
    }
    let latency = this.latency.get(route)
    if (!latency) {
      latency = { buckets: new Float64Array(DURATION_BUCKETS.length), sum: 0, count: 0 }
      this.latency.set(route, latency)
    }
    let bucket = 0
    while (bucket < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[bucket]!) bucket++
    if (bucket < DURATION_BUCKETS.length) latency.buckets[bucket]!++
    latency.sum += seconds
    latency.count++
    if (cacheStatus) count(this.cache, cacheStatus, () => ({ result: cacheStatus }))
    if (status === 429) {
      const limit = route === '/api/mcp' ? 'mcp' : 'rest'
      count(this.refused, limit, () => ({ limit }))
    }
  }

  snapshotLoaded(ok: boolean): void {
    const result = ok ? 'ok' : 'failed'
    count(this.loads, result, () => ({ result }))
  }

  /** This process's metrics, in the Prometheus text format. */
  text(): Promise<string> {
    return this.registry.metrics()
  }

  get contentType(): string {
    return this.registry.contentType
  }
}
