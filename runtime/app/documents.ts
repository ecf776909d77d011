/**
 * The documents beside the API, outside its rate limit: /openapi.yaml (from
 * the snapshot), the /docs browser, and the index at / that lists every
 * endpoint. Cached, tagged and compressed like the API's bodies.
 */
import type { H3 } from 'h3'
import { DOCS_TAG } from '../../core/cache-tags.ts'
import type { Config } from '../../core/config.ts'
import { contentHash } from '../../core/content-hash.ts'
import { snapshotPaths } from '../../core/snapshot.ts'
import { canonicalPath } from '../http/canonical-path.ts'
import { edgeHeaders } from '../http/edge-headers.ts'
import { httpError } from '../http/errors.ts'
import { filePayload, storedPayload } from '../http/payload.ts'
import { sendPayload } from '../http/respond.ts'
import { snapshotModifiedAt } from '../routes/context.ts'
import { handleDocs } from '../routes/docs.ts'
import type { SnapshotHolder } from '../snapshot/holder.ts'
import { ALLOW, preflight, READ_METHODS, readOnly, redirectTo, spelledPathOf } from './methods.ts'

/** The body at /: what jobsnap is and where each endpoint lives. */
const INDEX = Buffer.from(
  JSON.stringify({
    name: 'jobsnap',
    description: 'Every live job posting as JSON. Read-only, no authentication.',
    endpoints: {
      v2_list: '/api/v2/jobs',
      v2_job: '/api/v2/jobs/{slug}',
      v2_filters: '/api/v2/filters',
      v2_changes: '/api/v2/changes?since={snapshot_id}',
      v2_exports: '/api/v2/exports',
      feeds: ['/feeds/jobs.rss', '/feeds/jobs.atom', '/feeds/jobs.json'],
      v2_companies: '/api/v2/companies',
      v2_company: '/api/v2/companies/{slug}',
      v1_list: '/api/v1',
      mcp: '/api/mcp',
      openapi: '/openapi.yaml',
      docs: '/docs',
      health: '/health',
      ready: '/ready',
    },
  }),
)

/** /openapi.yaml: the snapshot's OpenAPI document, one spelling, GET and HEAD. */
export function addOpenApiRoute(app: H3, config: Config, snapshots: SnapshotHolder): void {
  app.all('/openapi.yaml', async (event) => {
    const request = event.req
    // A preflight cannot follow a redirect: answered whatever the spelling.
    if (request.method === 'OPTIONS') return preflight(ALLOW)
    // The router also matches /openapi.yaml/: that spelling is redirected, as the API's are.
    const canonical = canonicalPath(spelledPathOf(event))
    if (canonical) return redirectTo(canonical.path + event.url.search)
    if (!READ_METHODS.has(request.method))
      throw httpError(405, 'Only GET and HEAD are allowed.', { headers: [['allow', ALLOW]] })
    const snapshot = snapshots.current
    const body = await snapshot.readPublic(snapshotPaths.openapi)
    const hash = snapshot.files.get(snapshotPaths.openapi)
    if (!body || !hash) throw httpError(503, `Snapshot ${snapshot.id} lacks its OpenAPI document; rebuild it.`)
    const payload = filePayload(
      body,
      hash,
      (encoding) => snapshot.readPublic(snapshotPaths.openapi, encoding),
      'application/yaml; charset=utf-8',
    )
    return sendPayload(request, payload, {
      cacheStatus: 'HIT',
      maxAgeSeconds: config.JOBSNAP_CACHE_TTL,
      lastModified: snapshotModifiedAt(snapshot),
      edge: edgeHeaders(config, [DOCS_TAG]),
    })
  })
}

/** /docs (the API browser) and the index at /. */
export function addDocsRoutes(app: H3, config: Config): void {
  app.all(
    '/docs/**',
    readOnly((event) => {
      const response = handleDocs(event.req, event.url.pathname, config)
      if (!response) throw httpError(404, 'No such documentation file.')
      return response
    }),
  )
  app.all(
    '/docs',
    readOnly((event) => handleDocs(event.req, '/docs', config)!),
  )

  // Cached, tagged and compressed like every other successful body (HEAD announces GET's length).
  const indexPayload = storedPayload(INDEX, contentHash(INDEX))
  app.all(
    '/',
    readOnly((event) =>
      sendPayload(event.req, indexPayload, {
        cacheStatus: 'HIT',
        maxAgeSeconds: config.JOBSNAP_CACHE_TTL,
        edge: edgeHeaders(config, []),
      }),
    ),
  )
}
