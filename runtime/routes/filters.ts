/**
 * GET /api/v2/filters: every v2 filter's values with their live job counts,
 * one document per snapshot (computed on first demand, again only once a job
 * has expired since, and served from the response cache meanwhile).
 */
import { computedPayload } from '../http/payload.ts'
import { payloadReply, type Reply } from '../http/respond.ts'
import { filterVocabulary } from '../query/filters.ts'
import { queryContext } from '../snapshot/load.ts'
import { liveJobsModifiedAt, type RestContext } from './context.ts'
import { edgeHeaders } from '../http/edge-headers.ts'
import { LISTS_TAG } from '../../core/cache-tags.ts'

export async function handleV2Filters(ctx: RestContext): Promise<Reply> {
  const { snapshot } = ctx
  const key = `filters|${snapshot.id}|${snapshot.jobs.expiredCount(ctx.now)}`
  const result = await ctx.responseCache.getOrCompute(key, async () => {
    const vocabulary = filterVocabulary(queryContext(snapshot, ctx.now), snapshot.id)
    return computedPayload(Buffer.from(JSON.stringify(vocabulary)))
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
