/**
 * GET /docs: a human API reference rendered from /openapi.yaml by Swagger UI,
 * served from the swagger-ui-dist package (no CDN) under a strict CSP: no
 * inline or third-party scripts.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { withCommonHeaders } from '../http/respond.ts'
import { FastResponse } from 'srvx'

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

const INIT = `window.ui = SwaggerUIBundle({ url: '/openapi.yaml', dom_id: '#docs', deepLinking: true, tryItOutEnabled: true });\n`

// Linked from the page so a browser does not ask for /favicon.ico, get a 404 and log it as a console error.
const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1f6feb"/>' +
  '<path d="M9 11h14v12H9z" fill="none" stroke="#fff" stroke-width="2.5"/><path d="M13 11V8h6v3" fill="none" stroke="#fff" stroke-width="2.5"/></svg>\n'

interface Asset {
  body: Buffer
  type: string
}

let assets: Map<string, Asset> | undefined

/** Loaded on first use and kept: a few megabytes of static text. */
function docsAssets(): Map<string, Asset> {
  assets ??= new Map([
    ['/docs', { body: Buffer.from(PAGE), type: 'text/html; charset=utf-8' }],
    ['/docs/assets/favicon.svg', { body: Buffer.from(FAVICON), type: 'image/svg+xml' }],
    ['/docs/assets/init.js', { body: Buffer.from(INIT), type: 'text/javascript; charset=utf-8' }],
    [
      '/docs/assets/swagger-ui.css',
      { body: readFileSync(path.join(SWAGGER_DIR, 'swagger-ui.css')), type: 'text/css; charset=utf-8' },
    ],
    [
      '/docs/assets/swagger-ui-bundle.js',
      { body: readFileSync(path.join(SWAGGER_DIR, 'swagger-ui-bundle.js')), type: 'text/javascript; charset=utf-8' },
    ],
  ])
  return assets
}

export function handleDocs(request: Request, pathname: string): Response | undefined {
  const asset = docsAssets().get(pathname.replace(/\/$/, '') || pathname)
  if (!asset) return undefined
  return new FastResponse(request.method === 'HEAD' ? null : asset.body, {
    headers: withCommonHeaders([
      ['content-type', asset.type],
      // Explicit, so HEAD announces the length GET sends.
      ['content-length', String(asset.body.length)],
      ['cache-control', 'public, max-age=3600'],
      ['content-security-policy', DOCS_CSP],
      ['referrer-policy', 'no-referrer'],
    ]),
  })
}
