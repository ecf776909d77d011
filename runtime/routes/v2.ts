/**
 * GET /api/v2/jobs and /api/v2/jobs/{slug}. Both answer from the packed v2
 * bodies in memory (the same bytes as the per-job files on disk): the single
 * job as it is, the list as a query over the in-memory index whose page is
 * stitched from those bodies, then cached. No file is read per request.
 */
import { canonicalV2Query, parseV2ListQuery, V2_LIST_PARAMS } from '../../core/query.ts'
import { SLUG_PATTERN } from '../../core/schema/dataset.ts'
import { computedPayload, storedPayload } from '../http/payload.ts'
import { httpError } from '../http/errors.ts'
import { sendPayload } from '../http/respond.ts'
import { runV2Query } from '../query/run-query.ts'
import type { RestContext } from './context.ts'

const LIST_HEAD = Buffer.from('{"data":[')

export async function handleV2Job(ctx: RestContext, slug: string): Promise<Response> {
  const { snapshot } = ctx
  // Anything that is not a slug cannot name a job: it is answered 404 without a lookup.
  const position = SLUG_PATTERN.test(slug) ? snapshot.jobs.positionOf(slug) : undefined
  if (position === undefined || snapshot.jobs.isExpired(position, ctx.now)) {
    throw httpError(404, `No live job has the slug ${JSON.stringify(slug.slice(0, 100))}. List jobs at /api/v2/jobs.`, {
      headers: ctx.headers,
    })
  }
  // The identity body from memory; compressed copies are made on first demand and shared by hash.
  const payload = storedPayload(snapshot.v2Bodies.body(position), snapshot.jobs.hashAt(position))
  return sendPayload(ctx.request, payload, {
    cacheStatus: 'HIT',
    maxAgeSeconds: ctx.config.JOBSNAP_CACHE_TTL,
    headers: ctx.headers,
  })
}

/** Query parameters the v2 list does not take, named back so a misspelt filter is seen, not silently dropped. */
function ignoredParameters(params: URLSearchParams): string | undefined {
  const ignored = [...new Set(params.keys())].filter((name) => !Object.hasOwn(V2_LIST_PARAMS, name))
  return ignored.length ? ignored.map((name) => encodeURIComponent(name.slice(0, 100))).join(', ') : undefined
}

export async function handleV2List(ctx: RestContext): Promise<Response> {
  const ignored = ignoredParameters(ctx.url.searchParams)
  if (ignored) ctx.headers.push(['x-ignored-parameters', ignored])
  const parsed = parseV2ListQuery(ctx.url.searchParams)
  if (!parsed.ok) throw httpError(400, parsed.error.message, { field: parsed.error.field, headers: ctx.headers })
  const query = parsed.value
  const { snapshot } = ctx
  const key = `v2|${snapshot.id}|${snapshot.jobs.expiredCount(ctx.now)}|${canonicalV2Query(query)}`
  const result = await ctx.responseCache.getOrCompute(key, async () => {
    const { total, positions } = runV2Query({ index: snapshot.jobs, text: snapshot.text, now: ctx.now }, query)
    const tail = `],"page":${query.page},"limit":${query.limit},"total":${total},"has_more":${query.page * query.limit < total}}`
    return computedPayload(Buffer.concat([LIST_HEAD, snapshot.v2Bodies.join(positions), Buffer.from(tail)]))
  })
  return sendPayload(ctx.request, result!.payload, {
    cacheStatus: result!.hit ? 'HIT' : 'MISS',
    maxAgeSeconds: ctx.config.JOBSNAP_CACHE_TTL,
    headers: ctx.headers,
  })
}
