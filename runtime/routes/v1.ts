/**
 * GET /api/v1: the legacy list. Precomputed page files are served as they
 * are; other page sizes, and every page once a job has expired since the
 * build, are composed from the 100-job pages and cached.
 */
import { parseV1Paging } from '../../core/query.ts'
import { snapshotPaths, v1PageBody, v1UsageNotice } from '../../core/snapshot.ts'
import { computedPayload, filePayload } from '../http/payload.ts'
import { sendPayload } from '../http/respond.ts'
import { livePositions } from '../query/run-query.ts'
import type { LoadedSnapshot } from '../snapshot.ts'
import type { RestContext } from './context.ts'

const SOURCE_LIMIT = 100

/** Serialized v1 jobs at the given date-order positions, read from the precomputed 100-job pages. */
async function v1JobsAt(snapshot: LoadedSnapshot, positions: number[]): Promise<string[]> {
  const pages = new Map<number, unknown[]>()
  const out: string[] = []
  for (const position of positions) {
    const pageNumber = Math.floor(position / SOURCE_LIMIT) + 1
    let jobs = pages.get(pageNumber)
    if (!jobs) {
      const bytes = await snapshot.readPublic(snapshotPaths.v1Page(SOURCE_LIMIT, pageNumber))
      if (!bytes) throw new Error(`snapshot ${snapshot.id} lacks v1 page ${pageNumber}`)
      jobs = (JSON.parse(bytes.toString('utf8')) as { jobs: unknown[] }).jobs
      pages.set(pageNumber, jobs)
    }
    out.push(JSON.stringify(jobs[position % SOURCE_LIMIT]))
  }
  return out
}

export async function handleV1List(ctx: RestContext): Promise<Response> {
  const { snapshot, now } = ctx
  const { page, limit } = parseV1Paging(ctx.url.searchParams)
  const maxAgeSeconds = ctx.config.JOBSNAP_CACHE_TTL
  const nothingExpired = now < snapshot.jobs.firstExpiry
  const total = snapshot.jobs.size
  const precomputedPages = Math.max(1, Math.ceil(total / limit))

  if (nothingExpired && snapshot.manifest.v1_limits.includes(limit) && page <= precomputedPages) {
    const file = snapshotPaths.v1Page(limit, page)
    const body = await snapshot.readPublic(file)
    const hash = snapshot.manifest.files[file]
    if (body && hash) {
      const payload = filePayload(body, hash, (encoding) => snapshot.readPublic(file, encoding))
      return sendPayload(ctx.request, payload, { cacheStatus: 'HIT', maxAgeSeconds, headers: ctx.headers })
    }
  }

  const live = nothingExpired ? undefined : livePositions(snapshot.jobs, now)
  const liveTotal = live?.length ?? total
  const key = `v1|${snapshot.id}|${liveTotal}|${page}|${limit}`
  const result = await ctx.responseCache.getOrCompute(key, async () => {
    const start = (page - 1) * limit
    const positions = (live ?? Array.from({ length: total }, (_, i) => i)).slice(start, start + limit)
    const jobs = await v1JobsAt(snapshot, positions)
    return computedPayload(Buffer.from(v1PageBody(v1UsageNotice(snapshot.manifest.site_url), page, limit, liveTotal, jobs)))
  })
  return sendPayload(ctx.request, result!.payload, { cacheStatus: result!.hit ? 'HIT' : 'MISS', maxAgeSeconds, headers: ctx.headers })
}
