/**
 * The fast path: a single job or a v1 page answered straight from Node's
 * request, without the web Request and Response objects and the routing h3
 * needs. The same envelope (limit, headers), handlers and bytes, at a
 * fraction of the cost per request. Anything else is left to h3, decided
 * before any side effect.
 */
import type { IncomingMessage } from 'node:http'
import { FastURL } from 'srvx'
import { SLUG_PATTERN } from '../../core/schema/dataset.ts'
import { resolveClient, type TrustedProxies } from '../http/client-id.ts'
import type { MaybePromise, Reply, RequestLike } from '../http/respond.ts'
import type { RestContext } from '../routes/context.ts'
import { handleV1List } from '../routes/v1.ts'
import { handleV2Job } from '../routes/v2.ts'
import type { SnapshotHolder } from '../snapshot/holder.ts'
import type { RestEnvelope } from './rest-envelope.ts'

const V2_JOB_PREFIX = '/api/v2/jobs/'

/** A single job, its slug read from the path (the fast path takes only plain slugs, so the path is as sent). */
const handleV2JobAtPath = (ctx: RestContext): MaybePromise<Reply> =>
  handleV2Job(ctx, ctx.url.pathname.slice(V2_JOB_PREFIX.length), true)

/** A Node request's headers as a web Request's `headers.get` reads them (repeated fields joined, as fetch joins them). */
function nodeHeaders(request: IncomingMessage): RequestLike['headers'] {
  return {
    get(name) {
      const value = request.headers[name]
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value
    },
  }
}

/** The app's `precomputed`: the reply for a Node request the fast path takes, undefined for any other. */
export function fastPath(
  { restReply, replyForError }: RestEnvelope,
  snapshots: SnapshotHolder,
  isTrusted: TrustedProxies,
): (request: IncomingMessage) => MaybePromise<Reply> | undefined {
  return (request) => {
    const method = request.method
    if ((method !== 'GET' && method !== 'HEAD') || !snapshots.loaded) return undefined
    const target = request.url ?? ''
    // No closure made per request on this path: under tsx each would also get its name by a defineProperty call
    // (esbuild's keepNames).
    let version: 'v1' | 'v2'
    let handler: (ctx: RestContext) => MaybePromise<Reply>
    if (target.startsWith(V2_JOB_PREFIX)) {
      // Only a plain slug (no query, no further segment, nothing encoded): anything else takes h3's route.
      if (!SLUG_PATTERN.test(target.slice(V2_JOB_PREFIX.length))) return undefined
      version = 'v2'
      handler = handleV2JobAtPath
    } else if (target === '/api/v1' || target.startsWith('/api/v1?')) {
      version = 'v1'
      handler = handleV1List
    } else return undefined
    // Origin-form, parsed lazily; neither handler reads the host.
    const url = new FastURL(target)
    const client = resolveClient(
      request.socket.remoteAddress,
      (request.headers['x-forwarded-for'] as string | undefined) ?? null,
      isTrusted,
    )
    try {
      // A plain slug under /api/v2/jobs/, or /api/v1 itself: the canonical spelling, by the tests above.
      const reply = restReply(version, handler, {
        request: { method, headers: nodeHeaders(request) },
        url,
        client,
        canonical: true,
      })
      return reply instanceof Promise
        ? reply.catch((error: unknown) => replyForError(method, url.pathname, error))
        : reply
    } catch (error) {
      return replyForError(method, url.pathname, error)
    }
  }
}
