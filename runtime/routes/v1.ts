/**
 * GET /api/v1: the legacy list. A page is a frame around one contiguous
 * range of the packed v1 bodies (date order), read with one positional read;
 * pages of the precomputed sizes carry their file's hash as ETag (and are
 * compressed on demand, remembered by that hash), other sizes (and every page once a job has expired
 * since the build) are composed the same way and cached.
 */
import { parseV1Paging } from '../../core/query.ts'
import { snapshotPaths, v1PageFrame, v1UsageNotice } from '../../core/snapshot.ts'
import { computedPayload, storedPayload } from '../http/payload.ts'
import { type MaybePromise, payloadReply, type Reply } from '../http/respond.ts'
import { livePositions } from '../query/run-query.ts'
import type { LoadedSnapshot } from '../snapshot/load.ts'
import { ScratchBuffers } from '../http/scratch-buffers.ts'
import { liveJobsModifiedAt, type RestContext } from './context.ts'
import { edgeHeaders } from '../http/edge-headers.ts'
import { LISTS_TAG, v1PageTag } from '../../core/cache-tags.ts'

/** The exact bytes of a v1 page holding the jobs at ascending date `positions`. */
function v1PageBytes(
  snapshot: LoadedSnapshot,
  page: number,
  limit: number,
  total: number,
  positions: readonly number[],
): Buffer {
  const { head, tail } = v1PageFrame(v1UsageNotice(snapshot.manifest.site_url), page, limit, total)
  return Buffer.concat([Buffer.from(head), snapshot.v1Bodies.pick(positions), Buffer.from(tail)])
}

/** The buffers precomputed pages are read into, one per page in flight. */
const pageBuffers = new ScratchBuffers()

const range = (from: number, to: number): number[] => Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i)

export function handleV1List(ctx: RestContext): MaybePromise<Reply> {
  const { snapshot, now } = ctx
  const { page, limit } = parseV1Paging(ctx.url.searchParams)
  const maxAgeSeconds = ctx.config.JOBSNAP_CACHE_TTL
  const nothingExpired = now < snapshot.jobs.firstExpiry
  const total = snapshot.jobs.size
  const start = (page - 1) * limit

  if (nothingExpired) {
    const file = snapshotPaths.v1Page(limit, page)
    const hash = snapshot.files.get(file)
    if (hash !== undefined) {
      const { head, tail } = v1PageFrame(v1UsageNotice(snapshot.manifest.site_url), page, limit, total)
      const end = Math.min(total, start + limit)
      // Read into a reused buffer, given back once the response has been sent (or no body is sent).
      const scratch = pageBuffers.take(snapshot.v1Bodies.framedLength(start, end, head, tail))
      const body = snapshot.v1Bodies.framedRange(start, end, head, tail, scratch.bytes)
      const payload = storedPayload(body, hash)
      return payloadReply(ctx.request, payload, {
        cacheStatus: 'HIT',
        maxAgeSeconds,
        headers: ctx.headers,
        edge: edgeHeaders(ctx.config, [v1PageTag(limit, page)]),
        release: scratch.release,
        lastModified: liveJobsModifiedAt(ctx),
      })
    }
  }
  return computedV1Page(ctx, page, limit, nothingExpired)
}

/** A page of a size the build did not precompute, or any page once a job has expired: composed, then cached. */
async function computedV1Page(ctx: RestContext, page: number, limit: number, nothingExpired: boolean): Promise<Reply> {
  const { snapshot, now } = ctx
  const total = snapshot.jobs.size
  const start = (page - 1) * limit
  const live = nothingExpired ? undefined : livePositions(snapshot.jobs, now)
  const liveTotal = live?.length ?? total
  const key = `v1|${snapshot.id}|${liveTotal}|${page}|${limit}`
  const fileTagged = snapshot.files.get(snapshotPaths.v1Page(limit, page)) !== undefined
  const result = await ctx.responseCache.getOrCompute(key, async () => {
    const positions = live ? live.slice(start, start + limit) : range(start, Math.min(total, start + limit))
    return computedPayload(v1PageBytes(snapshot, page, limit, liveTotal, positions))
  })
  return payloadReply(ctx.request, result!.payload, {
    cacheStatus: result!.hit ? 'HIT' : 'MISS',
    maxAgeSeconds: ctx.config.JOBSNAP_CACHE_TTL,
    headers: ctx.headers,
    // A page the build did not write (another size, or past the end) is not in changed-tags.txt by page: `lists` is.
    edge: edgeHeaders(ctx.config, fileTagged ? [v1PageTag(limit, page)] : [v1PageTag(limit, page), LISTS_TAG]),
    release: result!.release,
    lastModified: liveJobsModifiedAt(ctx),
  })
}
