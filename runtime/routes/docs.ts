/**
 * GET /docs: a human API reference rendered from /openapi.yaml by Swagger UI,
 * served from the swagger-ui-dist package (no CDN) under a strict CSP: no
 * inline or third-party scripts.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { contentHash } from '../../core/content-hash.ts'
import { storedPayload } from '../http/payload.ts'
import { sendPayload } from '../http/respond.ts'
import { edgeHeaders } from '../http/edge-headers.ts'
import { DOCS_TAG } from '../../core/cache-tags.ts'
import type { Config } from '../../core/config.ts'

const require = createRequire(import.meta.url)
const SWAGGER_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'))

const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>jobsnap API reference</title>
<link rel="icon" type="image/svg+xml" href="/docs/assets/favicon.svg">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="docs"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/init.js"></script>
</body>
</html>
`

// Try it out asks "/" (this server), not the document's first server (the public URL, for generated
// clients): the page may connect only to its own origin, and a staging or local server must try requests on itself.
const INIT = `window.ui = SwaggerUIBundle({
  url: '/openapi.yaml',
  dom_id: '#docs',
  deepLinking: true,
  tryItOutEnabled: true,
  onComplete: () => window.ui.oas3Actions.setSelectedServer('/'),
});
`

// Linked from the page so a browser does not ask for /favicon.ico, get a 404 and log it as a console error.
const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1f6feb"/>' +
  '<path d="M9 11h14v12H9z" fill="none" stroke="#fff" stroke-width="2.5"/><path d="M13 11V8h6v3" fill="none" stroke="#fff" stroke-width="2.5"/></svg>\n'

interface Asset {
  body: Buffer
  type: string
  /** Content hash: the ETag, and the key its compressed copies are kept under. */
  hash: string
}

let assets: Map<string, Asset> | undefined

/** Loaded on first use and kept: a few megabytes of static text. */
function docsAssets(): Map<string, Asset> {
  const asset = (body: Buffer, type: string): Asset => ({ body, type, hash: contentHash(body) })
  assets ??= new Map([
    ['/docs', asset(Buffer.from(PAGE), 'text/html; charset=utf-8')],
    ['/docs/assets/favicon.svg', asset(Buffer.from(FAVICON), 'image/svg+xml')],
    ['/docs/assets/init.js', asset(Buffer.from(INIT), 'text/javascript; charset=utf-8')],
    [
      '/docs/assets/swagger-ui.css',
      asset(readFileSync(path.join(SWAGGER_DIR, 'swagger-ui.css')), 'text/css; charset=utf-8'),
    ],
    [
      '/docs/assets/swagger-ui-bundle.js',
      asset(readFileSync(path.join(SWAGGER_DIR, 'swagger-ui-bundle.js')), 'text/javascript; charset=utf-8'),
    ],
  ])
  return assets
}

/**
 * A docs file as any static body here is sent: a strong ETag (If-None-Match
 * gives 304), brotli or gzip on request (the 1.7 MB Swagger UI bundle is
 * ~0.5 MB compressed; made once and kept by content hash), HEAD with GET's
 * length.
 */
export function handleDocs(request: Request, pathname: string, config: Config): Promise<Response> | undefined {
  const asset = docsAssets().get(pathname.replace(/\/$/, '') || pathname)
  if (!asset) return undefined
  return sendPayload(request, storedPayload(asset.body, asset.hash, asset.type), {
    cacheStatus: 'HIT',
    maxAgeSeconds: config.JOBSNAP_CACHE_TTL,
    edge: edgeHeaders(config, [DOCS_TAG]),
    headers: [
      ['content-security-policy', DOCS_CSP],
      ['referrer-policy', 'no-referrer'],
    ],
  })
}
