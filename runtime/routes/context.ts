/** What a REST handler gets: the snapshot for this request, shared caches, the clock, headers to add. */
import type { Config } from '../../core/config.ts'
import type { HeaderList, RequestLike } from '../http/respond.ts'
import type { ResponseCache } from '../http/response-cache.ts'
import type { LoadedSnapshot } from '../snapshot/load.ts'

export interface RestContext {
  request: RequestLike
  url: URL
  /** Taken once per request: a snapshot swap mid-request never mixes two snapshots. */
  snapshot: LoadedSnapshot
  responseCache: ResponseCache
  config: Config
  now: number
  /** Rate-limit and version headers every response of this request carries. */
  headers: HeaderList
}

/**
 * Names back the query parameters an endpoint does not take (X-Ignored-Parameters),
 * so a misspelt filter is seen instead of silently widening the answer.
 */
export function nameIgnoredParameters(ctx: RestContext, taken: object): void {
  // A parameter with no name (`?=x`) has nothing to name: left out rather than listed as an empty name.
  const ignored = [...new Set(ctx.url.searchParams.keys())].filter((name) => name !== '' && !Object.hasOwn(taken, name))
  if (ignored.length)
    ctx.headers.push(['x-ignored-parameters', ignored.map((name) => encodeURIComponent(name.slice(0, 100))).join(', ')])
}

/**
 * When the snapshot's own files last changed for this server: its build, or
 * its publish when later (a rollback republishes an older build). A single
 * job's body is one of them until it expires (then 404).
 */
export function snapshotModifiedAt(snapshot: LoadedSnapshot): number {
  let builtAt = builtAtByManifest.get(snapshot.manifest)
  if (builtAt === undefined) {
    builtAt = Date.parse(snapshot.manifest.built_at)
    builtAtByManifest.set(snapshot.manifest, builtAt)
  }
  return Math.max(builtAt, snapshot.publishedAt ?? 0)
}

/** A manifest's build time (epoch ms), parsed once: Date.parse was ~0.3 us of a single job's answer. */
const builtAtByManifest = new WeakMap<LoadedSnapshot['manifest'], number>()

/**
 * When anything computed from the live jobs (lists, pages, counts, feeds,
 * changes) last changed: the snapshot's time, or a job's expiry since, when
 * later. A job expiring between builds drops out of those answers there and then.
 */
export function liveJobsModifiedAt(ctx: RestContext): number {
  return Math.max(snapshotModifiedAt(ctx.snapshot), ctx.snapshot.jobs.lastExpiryBy(ctx.now))
}
