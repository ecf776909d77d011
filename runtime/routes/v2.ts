/**
 * GET /api/v2/jobs and /api/v2/jobs/{slug}. Both answer from the packed v2
 * bodies in memory (the same bytes as the per-job files on disk): the single
 * job as it is, the list as a query over the in-memory index whose page is
 * stitched from those bodies, then cached. No file is read per request.
 */
import { encodeCursor } from '../../core/cursor.ts'
import { canonicalV2Query, parseV2ListQuery, V2_LIST_PARAMS, v2FiltersTag } from '../../core/query.ts'
import { SLUG_PATTERN } from '../../core/schema/dataset.ts'
import { computedPayload, storedPayload } from '../http/payload.ts'
import { decodedSegment } from '../http/canonical-path.ts'
import { httpError } from '../http/errors.ts'
import { type MaybePromise, payloadReply, type Reply } from '../http/respond.ts'
import { facetCounts } from '../query/facets.ts'
import { runV2Query } from '../query/run-query.ts'
import { jobCursorAt } from '../query/seek.ts'
import { queryContext } from '../snapshot/load.ts'
import { liveJobsModifiedAt, nameIgnoredParameters, type RestContext, snapshotModifiedAt } from './context.ts'
import { edgeHeaders } from '../http/edge-headers.ts'
import { jobTag, LISTS_TAG } from '../../core/cache-tags.ts'

const LIST_HEAD = Buffer.from('{"data":[')

/** `isSlug`: whether `slug` matches SLUG_PATTERN, when the caller has tested it already (the fast path). */
export function handleV2Job(ctx: RestContext, slug: string, isSlug = SLUG_PATTERN.test(slug)): MaybePromise<Reply> {
  const { snapshot } = ctx
  // Anything that is not a slug cannot name a job: it is answered 404 without a lookup.
  const position = isSlug ? snapshot.jobs.positionOf(slug) : undefined
  if (position === undefined || snapshot.jobs.isExpired(position, ctx.now)) {
    // Named as its escapes spell it (one that decodes to a slug was redirected to that spelling before).
    throw httpError(
      404,
      `No live job has the slug ${JSON.stringify(decodedSegment(slug).slice(0, 100))}. List jobs at /api/v2/jobs.`,
      {
        headers: ctx.headers,
      },
    )
  }
  // The identity body from memory; compressed copies are made on first demand and shared by hash.
  const payload = storedPayload(snapshot.v2Bodies.body(position), snapshot.jobs.hashAt(position))
  return payloadReply(ctx.request, payload, {
    cacheStatus: 'HIT',
    maxAgeSeconds: ctx.config.JOBSNAP_CACHE_TTL,
    headers: ctx.headers,
    lastModified: snapshotModifiedAt(ctx.snapshot),
    edge: edgeHeaders(ctx.config, [jobTag(slug)]),
  })
}

export async function handleV2List(ctx: RestContext): Promise<Reply> {
  nameIgnoredParameters(ctx, V2_LIST_PARAMS)
  const parsed = parseV2ListQuery(ctx.url.searchParams)
  if (!parsed.ok) throw httpError(400, parsed.error.message, { field: parsed.error.field, headers: ctx.headers })
  const query = parsed.value
  const { snapshot } = ctx
  const key = `v2|${snapshot.id}|${snapshot.jobs.expiredCount(ctx.now)}|${canonicalV2Query(query)}`
  const result = await ctx.responseCache.getOrCompute(key, async (allocate) => {
    const context = queryContext(snapshot, ctx.now)
    const { total, positions, more } = runV2Query(context, query)
    const facets = query.facets.length ? `,"facets":${JSON.stringify(facetCounts(context, query, query.facets))}` : ''
    // The cursor of the page's last job; none when nothing follows it (a page past the end has no last job either).
    const last = positions.at(-1)
    const next =
      more && last !== undefined
        ? JSON.stringify(encodeCursor(jobCursorAt(snapshot.jobs, query.sort, v2FiltersTag(query), last)))
        : 'null'
    // A page asked for by cursor has no number: `page` is null then.
    const tail = `],"page":${query.cursor ? 'null' : query.page},"limit":${query.limit},"total":${total},"has_more":${more},"next_cursor":${next}${facets}}`
    return computedPayload(
      snapshot.v2Bodies.join(positions, LIST_HEAD, Buffer.from(tail), allocate),
      undefined,
      allocate,
    )
  })
  return payloadReply(ctx.request, result!.payload, {
    cacheStatus: result!.hit ? 'HIT' : 'MISS',
    maxAgeSeconds: ctx.config.JOBSNAP_CACHE_TTL,
    headers: ctx.headers,
    edge: edgeHeaders(ctx.config, [LISTS_TAG]),
    release: result!.release,
    lastModified: liveJobsModifiedAt(ctx),
  })
}
