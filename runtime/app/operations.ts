/**
 * The operational endpoints, outside the API's rate limit: /health
 * (liveness, and which snapshot answers), /ready (for a load balancer) and
 * /metrics (Prometheus, to allowed peers only). Small JSON or text answers,
 * never cached.
 */
import type { H3 } from 'h3'
import { FastResponse } from 'srvx'
import type { Config } from '../../core/config.ts'
import { canonicalPath } from '../http/canonical-path.ts'
import { addressMatcher, peerMatches } from '../http/client-id.ts'
import { httpError } from '../http/errors.ts'
import { withCommonHeaders } from '../http/respond.ts'
import type { GcPauses } from '../ops/gc-pauses.ts'
import type { SnapshotHolder } from '../snapshot/holder.ts'
import { READ_METHODS, readOnly, redirectTo, spelledPathOf } from './methods.ts'

export interface OperationsDependencies {
  config: Config
  snapshots: SnapshotHolder
  clock: () => number
  gcPauses?: GcPauses
  metrics?: { text(): Promise<string>; contentType: string }
  draining?: () => boolean
}

/** A small JSON answer for the operational endpoints: never cached, HEAD announces GET's length. */
function operational(request: Request, status: number, body: unknown, extra: [string, string][] = []): Response {
  const bytes = Buffer.from(JSON.stringify(body))
  return new FastResponse(request.method === 'HEAD' ? null : bytes, {
    status,
    headers: withCommonHeaders([
      ['content-type', 'application/json; charset=utf-8'],
      ['content-length', String(bytes.length)],
      ['cache-control', 'no-store'],
      ...extra,
    ]),
  })
}

export function addOperationalRoutes(app: H3, deps: OperationsDependencies): void {
  const { config, snapshots, clock } = deps

  // Liveness: 200 whenever the process answers, `starting` until the first snapshot has loaded.
  app.all(
    '/health',
    readOnly((event) => {
      if (!snapshots.loaded) return operational(event.req, 200, { status: 'starting', pid: process.pid })
      const snapshot = snapshots.current
      const now = clock()
      const body = {
        status: 'ok',
        snapshot_id: snapshot.id,
        built_at: snapshot.manifest.built_at,
        age_seconds: Math.max(0, Math.round((now - Date.parse(snapshot.manifest.built_at)) / 1000)),
        live_jobs: snapshot.jobs.size,
        companies: snapshot.companies.size,
        // Which process answered: with --workers N, each worker is its own process.
        pid: process.pid,
        ...(deps.gcPauses
          ? {
              gc: {
                longest_pause_ms: Math.round(deps.gcPauses.longestMs() * 100) / 100,
                collections: deps.gcPauses.collections(),
              },
            }
          : {}),
      }
      return operational(event.req, 200, body)
    }),
  )

  // Readiness, for a load balancer: 503 until the first snapshot has loaded and from SIGTERM on (the drain).
  app.all(
    '/ready',
    readOnly((event) => {
      const unready = !snapshots.loaded
        ? 'starting: the first snapshot is still loading'
        : deps.draining?.()
          ? 'draining: shutting down after SIGTERM; send new requests elsewhere'
          : undefined
      if (unready)
        return operational(event.req, 503, { error: { code: 503, message: `Not ready: ${unready}.` } }, [
          ['retry-after', '2'],
          ['x-cache', 'BYPASS'],
        ])
      return operational(event.req, 200, { status: 'ready', snapshot_id: snapshots.current.id, pid: process.pid })
    }),
  )

  const { metrics } = deps
  if (metrics) {
    const allowed = addressMatcher('JOBSNAP_METRICS_ALLOW', config.JOBSNAP_METRICS_ALLOW)
    // The TCP peer, never X-Forwarded-For: a proxy in front must not open metrics to the world (see deploy/nginx.conf).
    // A proxy on loopback is an allowed peer, so a request it forwards on behalf of someone else is refused too.
    app.all('/metrics', async (event) => {
      const request = event.req
      // The router also matches /metrics/: one spelling, so a front that blocks /metrics blocks every way in.
      const canonical = canonicalPath(spelledPathOf(event))
      if (canonical) return redirectTo(canonical.path + event.url.search)
      if (!peerMatches((request as Request & { ip?: string }).ip, allowed))
        throw httpError(403, 'Metrics are served only to the addresses in JOBSNAP_METRICS_ALLOW.')
      if (request.headers.has('x-forwarded-for') || request.headers.has('forwarded'))
        throw httpError(403, 'Metrics are not served through a proxy: scrape the jobsnap port directly.')
      if (!READ_METHODS.has(request.method))
        throw httpError(405, 'Only GET and HEAD are allowed.', { headers: [['allow', 'GET, HEAD']] })
      const text = Buffer.from(await metrics.text())
      return new FastResponse(request.method === 'HEAD' ? null : text, {
        headers: withCommonHeaders([
          ['content-type', metrics.contentType],
          ['content-length', String(text.length)],
          ['cache-control', 'no-store'],
        ]),
      })
    })
  }
}
