/**
 * Single jobs and v1 pages are answered straight from Node's request (the
 * server's fast path), not through h3's routing and web Request/Response.
 * The answers must be the ones h3's routes give for the same request: here
 * every case is asked both ways, over real HTTP (fast path) and through the
 * h3 app's own fetch (routed), and status, headers and body bytes compared.
 */
import { readFile } from 'node:fs/promises'
import http from 'node:http'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { snapshotPaths } from '../../core/index.ts'
import type { RunningServer } from '../../runtime/index.ts'
import { rawGet, slowPipelinedClient, targetOf } from '../../support/raw-http.ts'
import { FIXTURE_NOW, startFixtureServer } from '../support/fixtures.ts'
import { buildRestFixture, type RestFixture } from './support/fixture.ts'

const NOW = FIXTURE_NOW.getTime()

/** Headers that differ per request or per connection whichever path answers. */
const PER_REQUEST = new Set([
  'date',
  'connection',
  'keep-alive',
  'x-request-id',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'ratelimit',
])

interface Answer {
  status: number
  reason: string
  headers: [string, string][]
  body: Buffer
}

let fixture: RestFixture
let server: RunningServer
let slug: string
let expiredSlug: string | undefined
const answeredFast = new Set<string>()

beforeAll(async () => {
  fixture = await buildRestFixture({ jobs: 300, companies: 40, seed: 3 })
  // Limits raised: one test here asks for a few hundred pages.
  server = await startFixtureServer(fixture.distDir, { JOBSNAP_REST_LIMIT: '100000' })
  // Which requests the fast path answered: it returns a reply, or leaves the request to h3.
  const precomputed = server.jobsnap.precomputed
  server.jobsnap.precomputed = (request) => {
    const reply = precomputed(request)
    if (reply !== undefined) answeredFast.add(`${request.method} ${request.url}`)
    return reply
  }
  slug = fixture.oracle.live(NOW)[7]!.raw.slug
  const live = new Set(fixture.oracle.live(NOW).map((job) => job.raw.slug))
  expiredSlug = fixture.oracle.jobs.map((job) => job.raw.slug).find((s) => !live.has(s))
})

afterAll(async () => {
  await server?.close()
  await fixture?.cleanup()
})

function comparable(pairs: [string, string][]): [string, string][] {
  return pairs.filter(([name]) => !PER_REQUEST.has(name))
}

/** Over HTTP with node:http: bytes exactly as sent, headers in the order sent. */
function viaHttp(method: string, path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${server.url}${path}`, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => {
        const pairs: [string, string][] = []
        for (let i = 0; i < res.rawHeaders.length; i += 2)
          pairs.push([res.rawHeaders[i]!.toLowerCase(), res.rawHeaders[i + 1]!])
        resolve({
          status: res.statusCode!,
          reason: res.statusMessage ?? '',
          headers: pairs,
          body: Buffer.concat(chunks),
        })
      })
    })
    req.on('error', reject)
    req.end()
  })
}

/** Through the h3 app itself, as its routes answer. */
async function viaRoutes(method: string, path: string, headers: Record<string, string>): Promise<Answer> {
  const response = await server.jobsnap.app.fetch(new Request(`http://localhost${path}`, { method, headers }))
  return {
    status: response.status,
    reason: response.statusText,
    headers: [...response.headers],
    body: Buffer.from(await response.arrayBuffer()),
  }
}

async function expectSameAnswer(method: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  // Asked once first, so a computed page is in the response cache for both (X-Cache: HIT either way).
  await viaHttp(method, path, headers)
  const routed = await viaRoutes(method, path, headers)
  answeredFast.clear()
  const fast = await viaHttp(method, path, headers)
  const what = `${method} ${path} ${JSON.stringify(headers)}`
  expect(answeredFast.has(`${method} ${path}`), `${what}: the fast path answered`).toBe(true)
  expect(fast.reason, what).toBe(http.STATUS_CODES[fast.status])
  expect(fast.status, what).toBe(routed.status)
  // h3's Headers sort by name; what matters is the same fields with the same values.
  expect(comparable(fast.headers).sort(), what).toEqual(comparable(routed.headers).sort())
  expect(fast.body.equals(routed.body), what).toBe(true)
  return fast
}

describe('the fast path for single jobs and v1 pages', () => {
  it('answers a single job exactly as the routed app does, in every representation', async () => {
    const plain = await expectSameAnswer('GET', `/api/v2/jobs/${slug}`)
    expect(plain.status).toBe(200)
    expect(JSON.parse(plain.body.toString('utf8')).slug).toBe(slug)
    const etag = plain.headers.find(([name]) => name === 'etag')![1]
    await expectSameAnswer('HEAD', `/api/v2/jobs/${slug}`)
    await expectSameAnswer('GET', `/api/v2/jobs/${slug}`, { 'accept-encoding': 'br' })
    await expectSameAnswer('GET', `/api/v2/jobs/${slug}`, { 'accept-encoding': 'gzip' })
    expect((await expectSameAnswer('GET', `/api/v2/jobs/${slug}`, { 'if-none-match': etag })).status).toBe(304)
    expect((await expectSameAnswer('GET', '/api/v2/jobs/no-such-job-anywhere')).status).toBe(404)
    if (expiredSlug) expect((await expectSameAnswer('GET', `/api/v2/jobs/${expiredSlug}`)).status).toBe(404)
  })

  it('answers v1 pages exactly as the routed app does, precomputed sizes and others', async () => {
    for (const query of ['', '?page=2', '?limit=7&page=3', '?page=999', '?page=0', '?limit=abc']) {
      await expectSameAnswer('GET', `/api/v1${query}`)
      await expectSameAnswer('HEAD', `/api/v1${query}`)
    }
    await expectSameAnswer('GET', '/api/v1?page=2', { 'accept-encoding': 'gzip, br' })
    // A page composed from the packed v1 bodies is its file's bytes, every time.
    const file = await readFile(path.join(fixture.distDir, 'current', snapshotPaths.v1Page(25, 2)))
    for (let i = 0; i < 3; i++) expect((await viaHttp('GET', '/api/v1?page=2', {})).body.equals(file)).toBe(true)
  })

  it('v1 pages are read into reused buffers: a slow client gets each page intact while others ask for more', async () => {
    // One connection pipelines 92 pages at once and reads nothing: 80 of 100 jobs (~15 MB, more than the
    // socket's buffers hold), then 12 of 25 jobs, whose bodies wait in Node in reused buffers behind them (Node
    // reads no further requests from a connection that far behind, so they must come in the same write).
    // Meanwhile other clients ask for pages of 25, taking every such buffer given back: one given back before
    // its bytes were sent would reach the slow client holding another page's bytes.
    const pages = [
      ...Array.from({ length: 80 }, (_, i) => ({ limit: 100, page: (i % 3) + 1 })),
      ...Array.from({ length: 12 }, (_, i) => ({ limit: 25, page: i + 1 })),
    ]
    const files = new Map<string, Buffer>()
    for (const [limit, count] of [
      [25, 12],
      [100, 3],
    ] as const)
      for (let page = 1; page <= count; page++)
        files.set(
          `${limit}/${page}`,
          await readFile(path.join(fixture.distDir, 'current', snapshotPaths.v1Page(limit, page))),
        )
    const slow = await slowPipelinedClient(
      Number(new URL(server.url).port),
      pages.map(({ limit, page }) => `/api/v1?limit=${limit}&page=${page}`),
    )
    await new Promise((resolve) => setTimeout(resolve, 300))
    // 125 pages: the last ones differ from the slow client's last, whose buffer a wrong release hands on first.
    for (let i = 0; i < 125; i++) {
      const page = (i % 12) + 1
      const other = await viaHttp('GET', `/api/v1?page=${page}`, {})
      expect(other.body.equals(files.get(`25/${page}`)!), `other client, page ${page}`).toBe(true)
    }
    const responses = await slow.readAll()
    expect(responses).toHaveLength(pages.length)
    for (const [i, response] of responses.entries()) {
      const { limit, page } = pages[i]!
      expect(response.status).toBe(200)
      expect(response.body.equals(files.get(`${limit}/${page}`)!), `slow client, limit ${limit} page ${page}`).toBe(
        true,
      )
    }
  }, 60_000)

  it('leaves everything else to the routes: a query on a single job, a trailing slash, other methods', async () => {
    for (const [method, path] of [
      ['GET', `/api/v2/jobs/${slug}?x=1`],
      ['GET', `/api/v2/jobs/${slug}/`],
      ['POST', `/api/v2/jobs/${slug}`],
      ['OPTIONS', '/api/v1'],
    ] as const) {
      answeredFast.clear()
      const routed = await viaHttp(method, path, {})
      expect(answeredFast.size, `${method} ${path}: left to h3`).toBe(0)
      // h3's answers carry Node's reason phrase as the fast path's do (srvx alone would send an empty one).
      expect(routed.reason, `${method} ${path}`).toBe(http.STATUS_CODES[routed.status])
    }
    const mcp = await rawGet(targetOf(server.url), '/api/mcp')
    expect(mcp.raw.toString('latin1')).toMatch(/^HTTP\/1\.1 405 Method Not Allowed\r\n/)
  })
})
