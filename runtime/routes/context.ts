/** What a REST handler gets: the snapshot for this request, shared caches, the clock, headers to add. */
import type { Config } from '../../core/config.ts'
import type { HeaderList, RequestLike } from '../http/respond.ts'
import type { ResponseCache } from '../http/response-cache.ts'
import type { LoadedSnapshot } from '../snapshot.ts'

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
