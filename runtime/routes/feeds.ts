/**
 * GET /feeds/jobs.rss, /feeds/jobs.atom and /feeds/jobs.json: the newest 50
 * live jobs matching any v2 filters, for feed readers. The filters mean what
 * they mean on /api/v2/jobs (the same parser and query engine); paging,
 * sort and facets do not apply to a feed and are named back as ignored.
 * Cached, ETagged and rate limited like the v2 list.
 */
import { publicBaseUrl } from '../../core/public-url.ts'
import { FEED_PARAMS, NO_FILTER, parseV2ListQuery, type V2ListQuery } from '../../core/query.ts'
import type { V2Job } from '../../core/schema/api.ts'
import { FEED_FORMATS, type FeedFormat, renderFeed } from './feed-render.ts'
import { httpError } from '../http/errors.ts'
import { computedPayload } from '../http/payload.ts'
import { payloadReply, type Reply } from '../http/respond.ts'
import { runV2Query } from '../query/run-query.ts'
import { queryContext } from '../snapshot/load.ts'
import { liveJobsModifiedAt, nameIgnoredParameters, type RestContext } from './context.ts'
import { edgeHeaders } from '../http/edge-headers.ts'
import { LISTS_TAG } from '../../core/cache-tags.ts'

const FEED_SIZE = 50
type FilterName = keyof typeof FEED_PARAMS

/** The filters as a query string in one spelling (names sorted, values sorted), for links and the cache key. */
function canonicalFilters(query: V2ListQuery): string {
  const params = new URLSearchParams()
  for (const name of Object.keys(FEED_PARAMS).sort() as FilterName[]) {
    const value = query[name]
    if (Array.isArray(value) ? value.length : value !== undefined)
      params.set(name, Array.isArray(value) ? [...new Set(value)].sort().join(',') : String(value))
  }
  return params.toString()
}

export async function handleFeed(ctx: RestContext, format: FeedFormat): Promise<Reply> {
  nameIgnoredParameters(ctx, FEED_PARAMS)
  const filtersOnly = new URLSearchParams(
    [...ctx.url.searchParams].filter(([name]) => Object.hasOwn(FEED_PARAMS, name)),
  )
  const parsed = parseV2ListQuery(filtersOnly)
  if (!parsed.ok) throw httpError(400, parsed.error.message, { field: parsed.error.field, headers: ctx.headers })
  const query: V2ListQuery = { ...parsed.value, page: 1, limit: FEED_SIZE, sort: NO_FILTER.sort, facets: [] }
  const { snapshot, now } = ctx
  const filters = canonicalFilters(query)
  // Links and ids come from the configured public address, never from Host or forwarded headers: a feed is
  // cached and shared (here and by any CDN), and an Atom id must not change with the name a reader used.
  const base = `${publicBaseUrl(snapshot.manifest.site_url)}/feeds/jobs`
  const key = `feed|${format}|${snapshot.id}|${snapshot.jobs.expiredCount(now)}|${filters}`
  const result = await ctx.responseCache.getOrCompute(key, async () => {
    const { positions } = runV2Query(queryContext(snapshot, now), query)
    const jobs = positions.map((p) => JSON.parse(snapshot.v2Bodies.body(p).toString('utf8')) as V2Job)
    const link = (f: FeedFormat) => `${base}.${f}${filters ? `?${filters}` : ''}`
    const body = renderFeed(format, {
      links: { rss: link('rss'), atom: link('atom'), json: link('json') },
      siteUrl: snapshot.manifest.site_url,
      selection: [...new URLSearchParams(filters)].map(([name, value]) => `${name}: ${value}`).join('; '),
      updated: new Date(snapshot.manifest.built_at),
      jobs,
    })
    return computedPayload(Buffer.from(body), FEED_FORMATS[format].contentType)
  })
  return payloadReply(ctx.request, result!.payload, {
    cacheStatus: result!.hit ? 'HIT' : 'MISS',
    release: result!.release,
    maxAgeSeconds: ctx.config.JOBSNAP_CACHE_TTL,
    headers: ctx.headers,
    lastModified: liveJobsModifiedAt(ctx),
    edge: edgeHeaders(ctx.config, [LISTS_TAG]),
  })
}
