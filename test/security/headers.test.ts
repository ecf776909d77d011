/**
 * Security headers fit a JSON API: X-Content-Type-Options: nosniff on every
 * kind of response (200, 304, 4xx, 429, docs, OpenAPI, health, MCP, and the
 * errors Node answers before the app), a declared Content-Type on every body,
 * no X-Powered-By, Server or Set-Cookie, and a strict Content-Security-Policy
 * on /docs (scripts only from this origin, no eval, no third-party hosts, no
 * framing) whose page has no inline script.
 */
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../../runtime/index.ts'
import { buildFixture, startFixtureServer, type FixtureSnapshot } from '../support/fixtures.ts'
import {
  parseResponse,
  rawExchange,
  rawGet,
  rawPost,
  targetOf,
  type RawResponse,
  type Target,
} from '../../support/raw-http.ts'

let fixture: FixtureSnapshot
let server: RunningServer
let limited: RunningServer
let slow: RunningServer
let target: Target
let slug: string
const MCP = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

beforeAll(async () => {
  fixture = await buildFixture({ jobs: 60, companies: 10, seed: 13 })
  server = await startFixtureServer(fixture.distDir, { JOBSNAP_REST_LIMIT: 100_000, JOBSNAP_MCP_BURST: 100_000 })
  limited = await startFixtureServer(fixture.distDir, {
    JOBSNAP_REST_LIMIT: 1,
    JOBSNAP_MCP_BURST: 1,
    JOBSNAP_MCP_RATE: 0.001,
  })
  slow = await startFixtureServer(fixture.distDir, { JOBSNAP_HEADERS_TIMEOUT_MS: 300, JOBSNAP_REQUEST_TIMEOUT_MS: 600 })
  target = targetOf(server.url)
  slug = (JSON.parse((await rawGet(target, '/api/v2/jobs?limit=1')).text) as { data: { slug: string }[] }).data[0]!.slug
})

afterAll(async () => {
  await Promise.all([server?.close(), limited?.close(), slow?.close()])
  await fixture?.cleanup()
})

/** Every kind of answer the service gives, by name. */
async function everyResponseKind(): Promise<[string, RawResponse][]> {
  const kinds: [string, RawResponse][] = []
  const add = async (name: string, pending: Promise<RawResponse>) => kinds.push([name, await pending])
  const list = await rawGet(target, '/api/v2/jobs?limit=3&level=senior')
  kinds.push(['200 v2 list (MISS)', list])
  await add('200 v2 list (HIT)', rawGet(target, '/api/v2/jobs?limit=3&level=senior'))
  await add('200 v2 list, brotli', rawGet(target, '/api/v2/jobs?limit=50', { 'accept-encoding': 'br' }))
  await add('200 v2 job', rawGet(target, `/api/v2/jobs/${slug}`))
  await add('200 v2 job, gzip', rawGet(target, `/api/v2/jobs/${slug}`, { 'accept-encoding': 'gzip' }))
  await add('200 v1', rawGet(target, '/api/v1'))
  await add('200 v1 computed page size', rawGet(target, '/api/v1?limit=7&page=2'))
  await add('304 v2 list', rawGet(target, '/api/v2/jobs?limit=3&level=senior', { 'if-none-match': list.headers.etag! }))
  await add('304 v2 job', rawGet(target, `/api/v2/jobs/${slug}`, { 'if-none-match': '*' }))
  await add('HEAD v2 job', rawGet(target, `/api/v2/jobs/${slug}`, {}, 'HEAD'))
  await add('400 v2 bad sort', rawGet(target, '/api/v2/jobs?sort=nope'))
  await add('404 unknown slug', rawGet(target, '/api/v2/jobs/no-such-job'))
  await add('404 no route', rawGet(target, '/nowhere'))
  await add('405 POST on REST', rawPost(target, '/api/v2/jobs', '{}', { 'content-type': 'application/json' }))
  await add(
    '204 CORS preflight',
    rawGet(target, '/api/v2/jobs', { origin: 'https://a.example', 'access-control-request-method': 'GET' }, 'OPTIONS'),
  )
  await add('200 /', rawGet(target, '/'))
  await add('200 /health', rawGet(target, '/health'))
  await add('200 /openapi.yaml', rawGet(target, '/openapi.yaml'))
  await add('200 /docs', rawGet(target, '/docs'))
  await add('200 /docs/assets/init.js', rawGet(target, '/docs/assets/init.js'))
  await add('200 /docs/assets/swagger-ui.css', rawGet(target, '/docs/assets/swagger-ui.css'))
  await add('404 /docs/nope', rawGet(target, '/docs/nope'))
  await add(
    '200 MCP tools/list',
    rawPost(target, '/api/mcp', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), MCP),
  )
  await add(
    '202 MCP notification',
    rawPost(target, '/api/mcp', JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), MCP),
  )
  await add('400 MCP batch', rawPost(target, '/api/mcp', '[]', MCP))
  await add('403 MCP foreign Host', rawPost(target, '/api/mcp', '{}', { ...MCP, host: 'evil.example' }))
  await add('405 MCP GET', rawGet(target, '/api/mcp'))
  await add('406 MCP Accept', rawPost(target, '/api/mcp', '{}', { ...MCP, accept: 'text/html' }))
  await add('413 MCP body', rawPost(target, '/api/mcp', Buffer.alloc(1_100_000, 0x20), MCP))
  await add('415 MCP content type', rawPost(target, '/api/mcp', '{}', { ...MCP, 'content-type': 'text/plain' }))
  await add('204 MCP preflight', rawGet(target, '/api/mcp', { origin: 'https://a.example' }, 'OPTIONS'))
  await add('431 huge URL', rawGet(target, `/api/v2/jobs?q=${'a'.repeat(20_000)}`))
  await add('400 malformed HTTP', rawExchange(target, 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header\r\n\r\n'))
  await add('400 no Host', rawExchange(target, 'GET /health HTTP/1.1\r\nConnection: close\r\n\r\n'))
  await add('400 unroutable target', rawGet(target, 'file:///etc/passwd'))
  await add('405 CONNECT', rawExchange(target, 'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n'))
  const limitedTarget = targetOf(limited.url)
  await rawGet(limitedTarget, '/api/v1')
  await add('429 REST', rawGet(limitedTarget, '/api/v1'))
  await rawPost(limitedTarget, '/api/mcp', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), MCP)
  await add(
    '429 MCP',
    rawPost(limitedTarget, '/api/mcp', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), MCP),
  )
  kinds.push(['408 slow headers', await slowHeaders(targetOf(slow.url))])
  return kinds
}

/** Sends half a request and waits for the server's 408. */
function slowHeaders(slowTarget: Target): Promise<RawResponse> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    const socket = net.connect(slowTarget.port, '127.0.0.1', () =>
      socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n'),
    )
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('error', () => {})
    socket.on('close', () => resolve(parseResponse(Buffer.concat(chunks))))
  })
}

describe('headers on every kind of response', () => {
  it('nosniff everywhere; a Content-Type on every body; no X-Powered-By, Server or Set-Cookie', async () => {
    const kinds = await everyResponseKind()
    const problems: string[] = []
    const seen = new Set<number>()
    for (const [name, res] of kinds) {
      seen.add(res.status)
      if (res.status === 0) problems.push(`${name}: no answer`)
      if (res.headers['x-content-type-options'] !== 'nosniff')
        problems.push(`${name}: X-Content-Type-Options ${res.headers['x-content-type-options']}`)
      for (const header of ['x-powered-by', 'server', 'set-cookie', 'x-aspnet-version'])
        if (res.headers[header] !== undefined) problems.push(`${name}: ${header}: ${res.headers[header]}`)
      if (res.body.length > 0 && !res.headers['content-type']) problems.push(`${name}: a body without Content-Type`)
      if (res.status >= 400 && !res.headers['content-type']?.startsWith('application/json'))
        problems.push(`${name}: error as ${res.headers['content-type']}`)
      if (res.status >= 400 && res.headers['cache-control'] !== 'no-store')
        problems.push(`${name}: error with Cache-Control ${res.headers['cache-control']}`)
    }
    expect(problems).toEqual([])
    // The list above really covers every class of answer.
    for (const status of [200, 202, 204, 304, 400, 403, 404, 405, 406, 408, 413, 415, 429, 431])
      expect(seen.has(status), `status ${status} covered`).toBe(true)
  })
})

describe('/docs', () => {
  function directives(csp: string): Map<string, string[]> {
    return new Map(
      csp
        .split(';')
        .map((part) => part.trim().split(/\s+/))
        .filter((tokens) => tokens[0])
        .map((tokens) => [tokens[0]!.toLowerCase(), tokens.slice(1)]),
    )
  }

  it('has a strict Content-Security-Policy: scripts from this origin only, no eval, no other hosts, no framing', async () => {
    for (const path of ['/docs', '/docs/', '/docs/assets/init.js', '/docs/assets/swagger-ui-bundle.js']) {
      const res = await rawGet(target, path, {}, path.endsWith('.js') ? 'HEAD' : 'GET')
      const csp = res.headers['content-security-policy']
      expect(csp, path).toBeDefined()
      const policy = directives(csp!)
      expect(policy.get('default-src'), path).toEqual(["'none'"])
      expect(policy.get('script-src'), path).toEqual(["'self'"])
      expect(policy.get('object-src') ?? policy.get('default-src'), path).toEqual(["'none'"])
      expect(policy.get('frame-ancestors'), path).toEqual(["'none'"])
      expect(policy.get('base-uri'), path).toEqual(["'none'"])
      expect(policy.get('form-action'), path).toEqual(["'none'"])
      for (const [name, sources] of policy) {
        for (const source of sources) {
          expect(source, `${path} ${name}`).not.toBe("'unsafe-eval'")
          expect(source, `${path} ${name}`).not.toBe("'wasm-unsafe-eval'")
          expect(source, `${path} ${name}`).not.toBe('*')
          expect(source, `${path} ${name}`).not.toMatch(/^(https?:|wss?:|\*\.|[a-z0-9-]+\.[a-z])/i)
          // Inline styles are the only relaxation Swagger UI needs; never inline scripts.
          if (source === "'unsafe-inline'") expect(name, path).toBe('style-src')
        }
      }
      expect(res.headers['x-content-type-options']).toBe('nosniff')
      expect(res.headers['referrer-policy']).toBe('no-referrer')
    }
  })

  it('the page loads only same-origin files and has no inline script or handler', async () => {
    const res = await rawGet(target, '/docs')
    expect(res.headers['content-type']).toMatch(/^text\/html/)
    const html = res.text
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)]
    expect(scripts.length).toBeGreaterThan(0)
    for (const [, attributes, content] of scripts) {
      expect(attributes).toMatch(/\bsrc="\/docs\/assets\/[^"]+"/)
      expect(content!.trim()).toBe('')
    }
    for (const [, url] of html.matchAll(/\b(?:src|href)="([^"]+)"/gi)) expect(url).toMatch(/^\/(?!\/)/)
    expect(html).not.toMatch(/\bon[a-z]+\s*=/i)
    expect(html).not.toMatch(/https?:\/\//)
  })
})
