/**
 * GET /api/v2/exports (the index) and /api/v2/exports/<name> (the files):
 * each snapshot's bulk exports, the files served as the build stored them,
 * streamed from disk (never read whole), with ranges for resumed downloads
 * and in-place Parquet queries. The file is opened when the request comes, so
 * a snapshot published or pruned meanwhile cannot change the bytes sent.
 */
import { open } from 'node:fs/promises'
import path from 'node:path'
import { EXPORTS_PATH, exportPath, exportsIndex } from '../../core/exports.ts'
import { ifRangeAllows, parseByteRange } from '../http/byte-range.ts'
import { httpError } from '../http/errors.ts'
import { computedPayload } from '../http/payload.ts'
import { cacheableHeaders, matchesIfNoneMatch, payloadReply, type Reply, withCommonHeaders } from '../http/respond.ts'
import type { RestContext } from './context.ts'
import { edgeHeaders } from '../http/edge-headers.ts'
import { EXPORTS_TAG, LISTS_TAG } from '../../core/cache-tags.ts'

export async function handleV2Exports(ctx: RestContext): Promise<Reply> {
  const { snapshot } = ctx
  const result = await ctx.responseCache.getOrCompute(`exports|${snapshot.id}`, async () => {
    const { snapshot_id, built_at, exports } = snapshot.manifest
    return computedPayload(Buffer.from(JSON.stringify(exportsIndex(snapshot_id, built_at, exports))))
  })
  return payloadReply(ctx.request, result!.payload, {
    cacheStatus: result!.hit ? 'HIT' : 'MISS',
    release: result!.release,
    maxAgeSeconds: ctx.config.JOBSNAP_CACHE_TTL,
    headers: ctx.headers,
    edge: edgeHeaders(ctx.config, [LISTS_TAG]),
  })
}

/** A browser resuming a download reads these too (not CORS-safelisted): added to the common exposed list. */
const EXPOSED_FOR_RANGES: [string, string] = ['access-control-expose-headers', 'Content-Range, Accept-Ranges']

export async function handleV2ExportFile(ctx: RestContext, name: string): Promise<Reply> {
  const { snapshot, request } = ctx
  const record = snapshot.manifest.exports.find((file) => file.name === name)
  if (!record)
    throw httpError(
      404,
      `No export is named ${JSON.stringify(name.slice(0, 100))}; the exports are listed at ${EXPORTS_PATH}.`,
      { headers: ctx.headers },
    )
  // The ETag is the file's SHA-256, as the index lists it: a client can check a download against either.
  const etag = `"${record.sha256}"`
  const lastModified = new Date(snapshot.manifest.built_at).toUTCString()
  const headers = withCommonHeaders(
    cacheableHeaders(etag, ctx.config.JOBSNAP_CACHE_TTL, 'HIT'),
    [['last-modified', lastModified], ['accept-ranges', 'bytes'], EXPOSED_FOR_RANGES],
    ctx.headers,
    edgeHeaders(ctx.config, [EXPORTS_TAG]),
  )
  if (matchesIfNoneMatch(request.headers.get('if-none-match'), etag)) return { status: 304, headers, body: null }

  const size = record.bytes
  const range = ifRangeAllows(request.headers.get('if-range'), etag, lastModified)
    ? parseByteRange(request.headers.get('range'), size)
    : ({ kind: 'whole' } as const)
  if (range.kind === 'unsatisfiable')
    throw httpError(416, `The range is outside the file: ${name} has ${size} bytes (offsets 0 to ${size - 1}).`, {
      field: 'range',
      headers: [...ctx.headers, ['accept-ranges', 'bytes'], ['content-range', `bytes */${size}`], EXPOSED_FOR_RANGES],
    })
  const [status, start, end] = range.kind === 'range' ? [206, range.start, range.end] : [200, 0, size - 1]
  headers.push(['content-type', record.content_type], ['content-length', String(end - start + 1)])
  if (status === 206) headers.push(['content-range', `bytes ${start}-${end}/${size}`])
  if (request.method === 'HEAD' || end < start) return { status, headers, body: null }
  const handle = await open(path.join(snapshot.dir, exportPath(record.name)), 'r')
  // The stream closes the file when it ends or when srvx destroys it (the client went away).
  return { status, headers, body: null, stream: handle.createReadStream({ start, end }) }
}
