/**
 * The process's Prometheus metrics (unless JOBSNAP_METRICS=false), fed by
 * the snapshot holder, the caches and the drain, and what /metrics serves: in
 * a cluster worker, the whole cluster's text, which the primary gathers.
 */
import cluster from 'node:cluster'
import type { Config } from '../../core/config.ts'
import { storedEncodingsBytes } from '../http/payload.ts'
import type { SharedLimitStore } from '../http/redis-limiter.ts'
import type { ResponseCache } from '../http/response-cache.ts'
import { clusterMetricsAsker } from '../ops/cluster-metrics.ts'
import { Metrics } from '../ops/metrics.ts'
import type { SnapshotHolder } from '../snapshot/holder.ts'

export interface MetricsSources {
  snapshots: SnapshotHolder
  fileCache: { calculatedSize: number }
  sharedLimits?: SharedLimitStore
  draining(): boolean
  /** The app's response cache, read at scrape time (the app is made after the metrics). */
  responseCache(): ResponseCache
}

export interface ServerMetrics {
  metrics?: Metrics
  /** What /metrics serves, when metrics are on. */
  served?: { text(): Promise<string>; contentType: string }
}

export function serverMetrics(config: Config, sources: MetricsSources): ServerMetrics {
  if (!config.JOBSNAP_METRICS) return {}
  const { snapshots, fileCache, sharedLimits, draining, responseCache } = sources
  const metrics = new Metrics({
    snapshot: () =>
      snapshots.loaded
        ? {
            id: snapshots.current.id,
            builtAt: snapshots.current.manifest.built_at,
            liveJobs: snapshots.current.jobs.size,
          }
        : undefined,
    ready: () => snapshots.loaded && !draining(),
    redisConnected: sharedLimits ? () => sharedLimits.redis.status === 'ready' : undefined,
    cacheBytes: () => ({
      responses: responseCache().bytes,
      encodings: storedEncodingsBytes(),
      files: fileCache.calculatedSize,
    }),
    ringRefusals: () => responseCache().ringRefusals,
  })
  // In a cluster worker a scrape covers every worker: the primary gathers them.
  const clusterText =
    cluster.isWorker && process.send
      ? clusterMetricsAsker({
          send: (message) => process.send!(message),
          on: (event, listener) => process.on(event, listener),
        })
      : undefined
  return { metrics, served: { text: clusterText ?? (() => metrics.text()), contentType: metrics.contentType } }
}
