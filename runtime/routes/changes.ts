/**
 * GET /api/v2/changes?since=<snapshot_id>: the job slugs added, updated and
 * removed from that snapshot to the live one, so a mirror syncs by polling
 * one small document (then fetching the added and updated jobs). Composed
 * from the links the build writes; answered from the response cache after.
 */
import { scalarParam } from '../../core/params.ts'
import { readPrunedSnapshots, SNAPSHOT_ID_PATTERN } from '../../core/snapshot.ts'
import { httpError } from '../http/errors.ts'
import { computedPayload } from '../http/payload.ts'
import { payloadReply, type Reply } from '../http/respond.ts'
import { ancestry, changesBetween, withoutExpired } from '../query/changes.ts'
import { keptLinks } from '../snapshot/history.ts'
import { liveJobsModifiedAt, nameIgnoredParameters, type RestContext } from './context.ts'
import { edgeHeaders } from '../http/edge-headers.ts'
import { LISTS_TAG } from '../../core/cache-tags.ts'

const CHANGES_PARAMS = { since: true }
const EXAMPLE_ID = '20261124T182512983Z-140529c3'
/** The build time an id starts with (sortable as text). */
const builtAt = (id: string) => id.slice(0, 19)

export async function handleV2Changes(ctx: RestContext): Promise<Reply> {
  nameIgnoredParameters(ctx, CHANGES_PARAMS)
  // Snapshot ids are spelled one way: another letter case is another (malformed) id.
  const param = scalarParam(ctx.url.searchParams, 'since', (value) => value.trim())
  if (!param.ok) throw httpError(400, param.error.message, { field: 'since', headers: ctx.headers })
  const since = param.value?.trim()
  if (!since)
    throw httpError(400, `since is required: a snapshot id, as X-Snapshot-Id names it (e.g. ${EXAMPLE_ID}).`, {
      field: 'since',
      headers: ctx.headers,
    })
  if (!SNAPSHOT_ID_PATTERN.test(since))
    throw httpError(
      400,
      `since must be a snapshot id, as X-Snapshot-Id names it (e.g. ${EXAMPLE_ID}); got ${JSON.stringify(since.slice(0, 60))}.`,
      { field: 'since', headers: ctx.headers },
    )

  const { snapshot, now } = ctx
  const expiredCount = snapshot.jobs.expiredCount(now)
  const key = `changes|${snapshot.id}|${expiredCount}|${since}`
  const cached = await ctx.responseCache.getOrCompute(key, async () => {
    const links = await keptLinks(snapshot.dir)
    const linkOf = (id: string) => links.get(id)
    const changes =
      since === snapshot.id ? { added: [], updated: [], removed: [] } : changesBetween(since, snapshot.id, linkOf)
    if (!changes) {
      const oldest = ancestry(snapshot.id, linkOf).at(-1)!
      // Kept once, then pruned: after a rollback, later builds can prune a snapshot newer than the oldest kept.
      // Beside `current` in the configured folder (the snapshot's own path may lead elsewhere through a link).
      const pruned = await readPrunedSnapshots(ctx.config.JOBSNAP_DIST)
      if (links.has(since) || pruned.includes(since) || builtAt(since) < builtAt(oldest))
        throw httpError(
          410,
          `Changes since ${since} are no longer kept; the oldest snapshot to sync from is ${oldest}. Re-read the full list (/api/v2/jobs) and poll from its X-Snapshot-Id.`,
          { field: 'since', headers: [...ctx.headers, ['x-oldest-snapshot-id', oldest]] },
        )
      throw httpError(404, `No snapshot has the id ${since}. Snapshot ids come from the X-Snapshot-Id header.`, {
        field: 'since',
        headers: ctx.headers,
      })
    }
    const live = withoutExpired(changes, new Set(expiredCount ? snapshot.jobs.expiredSlugs(now) : []))
    return computedPayload(Buffer.from(JSON.stringify({ since, until: snapshot.id, ...live })))
  })
  return payloadReply(ctx.request, cached!.payload, {
    cacheStatus: cached!.hit ? 'HIT' : 'MISS',
    release: cached!.release,
    maxAgeSeconds: ctx.config.JOBSNAP_CACHE_TTL,
    headers: ctx.headers,
    lastModified: liveJobsModifiedAt(ctx),
    edge: edgeHeaders(ctx.config, [LISTS_TAG]),
  })
}
