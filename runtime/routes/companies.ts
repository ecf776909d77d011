/**
 * GET /api/v2/companies and /api/v2/companies/{slug}: employers with at least
 * one live job, from the snapshot's company index in memory. Answers are
 * computed on first demand and kept in the response cache (keyed, like the
 * jobs list, by snapshot, expiries since the build, and canonical query).
 */
import {
  canonicalCompanyQuery,
  companyFiltersTag,
  parseV2CompanyQuery,
  V2_COMPANY_PARAMS,
} from '../../core/company-query.ts'
import { encodeCursor } from '../../core/cursor.ts'
import { toV2CompanyProfile } from '../../core/company.ts'
import type { V2CompanyListResponse } from '../../core/schema/api.ts'
import { decodedSegment } from '../http/canonical-path.ts'
import { httpError } from '../http/errors.ts'
import { computedPayload } from '../http/payload.ts'
import { payloadReply, type Reply } from '../http/respond.ts'
import { companyCursorAt, runCompanyQuery } from '../query/companies.ts'
import { liveJobsByCompany } from '../query/live-jobs.ts'
import { liveJobsModifiedAt, nameIgnoredParameters, type RestContext } from './context.ts'
import { edgeHeaders } from '../http/edge-headers.ts'
import { companyTag, LISTS_TAG } from '../../core/cache-tags.ts'

export async function handleV2Companies(ctx: RestContext): Promise<Reply> {
  nameIgnoredParameters(ctx, V2_COMPANY_PARAMS)
  const parsed = parseV2CompanyQuery(ctx.url.searchParams)
  if (!parsed.ok) throw httpError(400, parsed.error.message, { field: parsed.error.field, headers: ctx.headers })
  const query = parsed.value
  const { snapshot, now } = ctx
  const key = `companies|${snapshot.id}|${snapshot.jobs.expiredCount(now)}|${canonicalCompanyQuery(query)}`
  const result = await ctx.responseCache.getOrCompute(key, async () => {
    const { total, page, more } = runCompanyQuery(snapshot.companies, liveJobsByCompany(snapshot, now), query)
    const last = page.at(-1)
    const body: V2CompanyListResponse = {
      data: page.map(({ company, liveJobs }) => toV2CompanyProfile(company, liveJobs)),
      // A page asked for by cursor has no number.
      page: query.cursor ? null : query.page,
      limit: query.limit,
      total,
      has_more: more,
      next_cursor:
        more && last
          ? encodeCursor(companyCursorAt(last.company, last.liveJobs, query.sort, companyFiltersTag(query)))
          : null,
    }
    return computedPayload(Buffer.from(JSON.stringify(body)))
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

export async function handleV2Company(ctx: RestContext, slug: string): Promise<Reply> {
  const { snapshot, now } = ctx
  const index = snapshot.companies.indexOfSlug(slug)
  const liveJobs = index === undefined ? 0 : (liveJobsByCompany(snapshot, now).get(snapshot.companies.id(index)) ?? 0)
  if (index === undefined || liveJobs === 0) {
    throw httpError(
      404,
      `No company with a live job has the slug ${JSON.stringify(decodedSegment(slug).slice(0, 100))}. List companies at /api/v2/companies.`,
      { headers: ctx.headers },
    )
  }
  const key = `company|${snapshot.id}|${snapshot.jobs.expiredCount(now)}|${slug}`
  const result = await ctx.responseCache.getOrCompute(key, async () =>
    computedPayload(Buffer.from(JSON.stringify(toV2CompanyProfile(snapshot.companies.company(index), liveJobs)))),
  )
  return payloadReply(ctx.request, result!.payload, {
    cacheStatus: result!.hit ? 'HIT' : 'MISS',
    release: result!.release,
    maxAgeSeconds: ctx.config.JOBSNAP_CACHE_TTL,
    headers: ctx.headers,
    lastModified: liveJobsModifiedAt(ctx),
    edge: edgeHeaders(ctx.config, [companyTag(slug)]),
  })
}
