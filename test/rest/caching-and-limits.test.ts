/**
 * Caching, conditional requests, compression and rate limits (docs/api.md:
 * Caching and Rate limits), through real servers on
 * loopback. Rate-limit servers run on a clock the test moves, so windows and
 * Retry-After values are exact rather than timed.
 */
import http from 'node:http'
import zlib from 'node:zlib'
import ipaddr from 'ipaddr.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveClient, type RunningServer, trustedProxyMatcher } from '../../runtime/index.ts'
import { FIXTURE_NOW, startFixtureServer } from '../support/fixtures.ts'
import { buildRestFixture, type RestFixture } from './support/fixture.ts'
import { expectErrorResponse, expectRateLimitHeaders, request, type V2ListResponse } from './support/http.ts'

const NOW = FIXTURE_NOW.getTime()

let fixture: RestFixture
let slug: string

beforeAll(async () => {
  fixture = await buildRestFixture({ jobs: 300, companies: 40, seed: 3 })
  slug = fixture.oracle.live(NOW)[5]!.raw.slug
})

afterAll(async () => {
  await fixture?.cleanup()
})

interface RawResponse {
  status: number
  headers: http.IncomingHttpHeaders
  body: Buffer
}

/** A GET with node:http, so the body arrives exactly as sent (no transparent decompression). */
function rawGet(url: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('error', reject)
  })
}

describe('caching', () => {
  let server: RunningServer
  let base: string

  beforeAll(async () => {
    server = await startFixtureServer(fixture.distDir, { JOBSNAP_REST_LIMIT: 100_000 })
    base = server.url
  })
  afterAll(async () => {
    await server?.close()
  })

  const cacheable = () => [
    '/api/v1',
    '/api/v1?limit=13',
    '/api/v2/jobs',
    '/api/v2/jobs?category=engineering&sort=salary',
    `/api/v2/jobs/${slug}`,
  ]

  it('successful responses: Cache-Control public, max-age=60 and a strong ETag', async () => {
    for (const path of [...cacheable(), '/openapi.yaml']) {
      const res = await fetch(`${base}${path}`, { headers: { 'accept-encoding': 'identity' } })
      await res.arrayBuffer()
      expect(res.status, path).toBe(200)
      expect(res.headers.get('cache-control'), path).toBe('public, max-age=60')
      const etag = res.headers.get('etag') ?? ''
      expect(etag, `${path}: strong, quoted`).toMatch(/^"[!#-~]+"$/)
      expect(['HIT', 'MISS']).toContain(res.headers.get('x-cache'))
    }
  })

  it('If-None-Match with the ETag gets 304 with no body; another tag gets 200', async () => {
    for (const path of cacheable()) {
      const first = await request<unknown>(`${base}${path}`)
      const etag = first.headers.get('etag')!
      for (const tag of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
        const res = await fetch(`${base}${path}`, { headers: { 'if-none-match': tag, 'accept-encoding': 'identity' } })
        const body = await res.arrayBuffer()
        expect(res.status, `${path} If-None-Match: ${tag}`).toBe(304)
        expect(body.byteLength).toBe(0)
        expect(res.headers.get('etag')).toBe(etag)
        expect(res.headers.get('cache-control')).toBe('public, max-age=60')
        expect(res.headers.get('access-control-allow-origin')).toBe('*')
        // A 304 still counts against the budget and says so.
        expectRateLimitHeaders(res.headers, 100_000)
      }
      const other = await fetch(`${base}${path}`, {
        headers: { 'if-none-match': '"something-else"', 'accept-encoding': 'identity' },
      })
      expect(other.status).toBe(200)
      expect(await other.text()).toBe(first.text)
    }
  })

  it("If-None-Match matches only the tag of the encoding being sent, not another encoding's", async () => {
    let checked = 0
    for (const path of cacheable()) {
      const gzip = await fetch(`${base}${path}`, { headers: { 'accept-encoding': 'gzip' } })
      await gzip.arrayBuffer()
      const gzipTag = gzip.headers.get('etag')!
      // Bodies too small to compress have one representation, whatever was asked.
      if (gzip.headers.get('content-encoding') !== 'gzip') continue
      const again = await fetch(`${base}${path}`, { headers: { 'accept-encoding': 'gzip', 'if-none-match': gzipTag } })
      expect(again.status, `${path}: its own tag`).toBe(304)
      const identity = await fetch(`${base}${path}`, {
        headers: { 'accept-encoding': 'identity', 'if-none-match': gzipTag },
      })
      expect(identity.status, `${path}: the gzip tag for identity`).toBe(200)
      expect(identity.headers.get('etag')).not.toBe(gzipTag)
      await identity.arrayBuffer()
      checked++
    }
    expect(checked, 'paths whose answers are large enough to compress').toBeGreaterThan(0)
  })

  it('X-Cache: a v2 list is MISS, then HIT with the same bytes; single jobs are HIT; errors BYPASS', async () => {
    const fresh = await startFixtureServer(fixture.distDir, { JOBSNAP_REST_LIMIT: 100_000 })
    try {
      const a = await request<V2ListResponse>(`${fresh.url}/api/v2/jobs?level=senior`)
      const b = await request<V2ListResponse>(`${fresh.url}/api/v2/jobs?level=senior`)
      expect(a.headers.get('x-cache')).toBe('MISS')
      expect(b.headers.get('x-cache')).toBe('HIT')
      expect(b.text).toBe(a.text)
      expect(b.headers.get('etag')).toBe(a.headers.get('etag'))
      expect((await request(`${fresh.url}/api/v2/jobs/${slug}`)).headers.get('x-cache')).toBe('HIT')
      for (const path of ['/api/v2/jobs?sort=bad', '/api/v2/jobs/not-a-job']) {
        for (let i = 0; i < 2; i++) expect((await request(`${fresh.url}${path}`)).headers.get('x-cache')).toBe('BYPASS')
      }
    } finally {
      await fresh.close()
    }
  })

  it('requests that mean the same share one cache entry (?page=1&limit=25 and ?)', async () => {
    const fresh = await startFixtureServer(fixture.distDir, { JOBSNAP_REST_LIMIT: 100_000 })
    try {
      const groups = [
        ['', '?page=1&limit=25', '?sort=date', '?limit=25&utm_source=x', '?category='],
        ['?level=senior,lead', '?level=lead&level=senior', '?level=LEAD,Senior'],
      ]
      for (const group of groups) {
        const first = await request<V2ListResponse>(`${fresh.url}/api/v2/jobs${group[0]}`)
        expect(first.headers.get('x-cache'), group[0]).toBe('MISS')
        for (const query of group.slice(1)) {
          const res = await request<V2ListResponse>(`${fresh.url}/api/v2/jobs${query}`)
          expect(res.headers.get('x-cache'), query).toBe('HIT')
          expect(res.text, query).toBe(first.text)
          expect(res.headers.get('etag'), query).toBe(first.headers.get('etag'))
        }
      }
    } finally {
      await fresh.close()
    }
  })

  it('Accept-Encoding br / gzip: Content-Encoding, Vary, and the decoded body equals identity', async () => {
    for (const path of [...cacheable(), '/openapi.yaml', '/api/v2/jobs?limit=100&sort=salary']) {
      const identity = await rawGet(`${base}${path}`, { 'accept-encoding': 'identity' })
      expect(identity.status).toBe(200)
      expect(identity.headers['content-encoding']).toBeUndefined()
      expect(String(identity.headers.vary)).toMatch(/accept-encoding/i)
      const cases: [string, string, (b: Buffer) => Buffer][] = [
        ['br', 'br', (b) => zlib.brotliDecompressSync(b)],
        ['gzip', 'gzip', (b) => zlib.gunzipSync(b)],
        ['gzip, deflate, br', 'br', (b) => zlib.brotliDecompressSync(b)],
        ['br;q=0.5, gzip', 'gzip', (b) => zlib.gunzipSync(b)],
      ]
      for (const [accept, expected, decode] of cases) {
        const res = await rawGet(`${base}${path}`, { 'accept-encoding': accept })
        expect(res.status).toBe(200)
        expect(res.headers['content-encoding'], `${path} (${accept})`).toBe(expected)
        expect(String(res.headers.vary)).toMatch(/accept-encoding/i)
        expect(Number(res.headers['content-length'])).toBe(res.body.length)
        expect(res.body.length).toBeLessThan(identity.body.length)
        expect(decode(res.body).equals(identity.body), `${path} (${accept}) decodes to the identity body`).toBe(true)
        // A different representation has its own tag; either tag revalidates.
        expect(res.headers.etag).not.toBe(identity.headers.etag)
        const revalidate = await rawGet(`${base}${path}`, {
          'accept-encoding': accept,
          'if-none-match': String(res.headers.etag),
        })
        expect(revalidate.status).toBe(304)
      }
      const refused = await rawGet(`${base}${path}`, { 'accept-encoding': 'br;q=0, gzip;q=0' })
      expect(refused.headers['content-encoding']).toBeUndefined()
      expect(refused.body.equals(identity.body)).toBe(true)
    }
  })
})

describe('rate limit: 60 a rolling minute per client, v1 and v2 together', () => {
  let server: RunningServer
  let base: string
  let now = NOW
  const at = (ms: number) => {
    now = ms
  }

  beforeAll(async () => {
    // The default configuration: no JOBSNAP_REST_LIMIT override, no trusted proxy.
    server = await startFixtureServer(fixture.distDir, {}, () => now)
    base = server.url
  })
  afterAll(async () => {
    await server?.close()
  })

  const restPaths = () => [
    '/api/v1',
    '/api/v2/jobs',
    `/api/v2/jobs/${slug}`,
    '/api/v1?page=2',
    '/api/v2/jobs?sort=nope',
    '/api/v2/jobs/missing-job',
    '/api/v2/jobs?level=senior',
  ]

  it('the 61st request is 429 with Retry-After, the error body and rate-limit headers; 429s consume nothing', async () => {
    const t0 = NOW + 1_000_000
    at(t0)
    const paths = restPaths()
    for (let i = 1; i <= 60; i++) {
      const path = paths[i % paths.length]!
      const res = await request(`${base}${path}`)
      expect(res.status, `request ${i} (${path})`).not.toBe(429)
      const { remaining, reset } = expectRateLimitHeaders(res.headers, 60)
      expect(remaining, `request ${i}`).toBe(60 - i)
      expect(reset).toBe(60)
    }
    for (const path of ['/api/v2/jobs', '/api/v1', `/api/v2/jobs/${slug}`]) {
      const res = await request(`${base}${path}`)
      expectErrorResponse(res, 429)
      const retryAfter = res.headers.get('retry-after')
      expect(retryAfter).toMatch(/^\d+$/)
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1)
      expect(Number(retryAfter)).toBe(60)
      const { remaining, reset } = expectRateLimitHeaders(res.headers, 60)
      expect(remaining).toBe(0)
      expect(reset).toBe(Number(retryAfter))
      expect(res.headers.get('access-control-expose-headers')?.toLowerCase()).toContain('retry-after')
    }

    // Half a minute later: still refused, and the wait is what is left of the oldest request's minute.
    at(t0 + 30_000)
    for (let i = 0; i < 15; i++) {
      const res = await request(`${base}/api/v2/jobs`)
      expect(res.status).toBe(429)
      expect(res.headers.get('retry-after')).toBe('30')
      expect(res.headers.get('x-ratelimit-reset')).toBe('30')
    }
    // 29.5 s left: whole seconds round up, or a client retrying on time would be refused again.
    at(t0 + 30_500)
    const partial = await request(`${base}/api/v2/jobs`)
    expect(partial.headers.get('retry-after')).toBe('30')
    expect(partial.headers.get('x-ratelimit-reset')).toBe('30')
    at(t0 + 59_999)
    const almost = await request(`${base}/api/v1`)
    expect(almost.status).toBe(429)
    expect(almost.headers.get('retry-after')).toBe('1')

    // A minute after the first burst every counted request has left the window; the 429s were never counted.
    at(t0 + 60_000)
    const back = await request(`${base}/api/v2/jobs`)
    expect(back.status).toBe(200)
    expect(expectRateLimitHeaders(back.headers, 60).remaining).toBe(59)
  })

  it('the window rolls: requests leave it one minute after they were made', async () => {
    const t0 = NOW + 5_000_000
    at(t0)
    for (let i = 0; i < 30; i++) expect((await request(`${base}/api/v1`)).status).toBe(200)
    at(t0 + 20_000)
    const second = await request(`${base}/api/v2/jobs`)
    // Reset: whole seconds until the oldest counted request leaves the window.
    expect(expectRateLimitHeaders(second.headers, 60)).toEqual({ remaining: 29, reset: 40 })
    for (let i = 0; i < 29; i++) expect((await request(`${base}/api/v2/jobs`)).status).toBe(200)
    expect((await request(`${base}/api/v2/jobs`)).status).toBe(429)
    at(t0 + 60_000)
    // The first 30 left; the 30 made at +20 s stay until +80 s.
    const res = await request(`${base}/api/v1`)
    expect(res.status).toBe(200)
    expect(expectRateLimitHeaders(res.headers, 60)).toEqual({ remaining: 29, reset: 20 })
  })

  it('/openapi.yaml, /health and /docs are not limited and do not count', async () => {
    const t0 = NOW + 9_000_000
    at(t0)
    for (let i = 0; i < 80; i++) {
      const path = ['/openapi.yaml', '/health', '/docs'][i % 3]!
      const res = await fetch(`${base}${path}`)
      await res.arrayBuffer()
      expect(res.status, path).toBe(200)
    }
    const first = await request(`${base}/api/v2/jobs`)
    expect(expectRateLimitHeaders(first.headers, 60).remaining).toBe(59)
    for (let i = 0; i < 59; i++) await request(`${base}/api/v1`)
    expect((await request(`${base}/api/v1`)).status).toBe(429)
    for (const path of ['/openapi.yaml', '/health', '/docs']) {
      const res = await fetch(`${base}${path}`)
      await res.arrayBuffer()
      expect(res.status, `${path} while the REST bucket is empty`).toBe(200)
    }
  })

  it('without a trusted proxy, a spoofed X-Forwarded-For does not get a fresh bucket', async () => {
    const t0 = NOW + 13_000_000
    at(t0)
    for (let i = 0; i < 60; i++) await request(`${base}/api/v2/jobs`)
    for (const spoof of ['203.0.113.9', '198.51.100.1, 203.0.113.10', '2001:db8::1', 'unknown']) {
      const res = await request(`${base}/api/v2/jobs`, { headers: { 'x-forwarded-for': spoof } })
      expect(res.status, `X-Forwarded-For: ${spoof}`).toBe(429)
    }
  })
})

describe('rate limit: clients behind a trusted proxy', () => {
  let server: RunningServer
  let base: string

  beforeAll(async () => {
    server = await startFixtureServer(fixture.distDir, { JOBSNAP_TRUST_PROXY: '127.0.0.1' })
    base = server.url
  })
  afterAll(async () => {
    await server?.close()
  })

  const as = (client: string, path = '/api/v2/jobs') =>
    request(`${base}${path}`, { headers: { 'x-forwarded-for': client } })

  async function exhaust(client: string): Promise<void> {
    for (let i = 0; i < 60; i++) expect((await as(client, i % 2 ? '/api/v1' : '/api/v2/jobs')).status).toBe(200)
    expect((await as(client)).status).toBe(429)
  }

  it('two clients do not share a bucket', async () => {
    await exhaust('203.0.113.1')
    const other = await as('203.0.113.2')
    expect(other.status).toBe(200)
    expect(expectRateLimitHeaders(other.headers, 60).remaining).toBe(59)
    // The proxy's own address, without the header, is a third client.
    const direct = await request(`${base}/api/v1`)
    expect(direct.status).toBe(200)
    expect(expectRateLimitHeaders(direct.headers, 60).remaining).toBe(59)
  })

  it('the client is the rightmost untrusted hop: a forged leftmost entry does not help', async () => {
    await exhaust('198.51.100.20')
    expect((await as('192.0.2.77, 198.51.100.20')).status).toBe(429)
    expect((await as('192.0.2.77, 198.51.100.20, 127.0.0.1')).status).toBe(429)
    expect((await as('198.51.100.20, 192.0.2.78')).status).toBe(200)
  })

  it('IPv6 clients are grouped by /64', async () => {
    await exhaust('2001:db8:aaaa:1::1')
    expect((await as('2001:db8:aaaa:1:ffff:ffff:ffff:fffe')).status).toBe(429)
    expect((await as('[2001:db8:aaaa:1::99]')).status).toBe(429)
    expect((await as('2001:db8:aaaa:2::1')).status).toBe(200)
  })
})

describe('resolveClient (unit)', () => {
  const none = trustedProxyMatcher([])
  const proxies = trustedProxyMatcher(['127.0.0.1', '10.0.0.0/8', 'fd00::/8'])

  it('groups IPv6 addresses by /64 and keeps IPv4 whole', () => {
    const a = resolveClient('2001:db8:1:2::1', null, none)
    expect(resolveClient('2001:db8:1:2:abcd:ef01:2345:6789', null, none)).toBe(a)
    expect(resolveClient('2001:0db8:0001:0002:0000:0000:0000:0002', null, none)).toBe(a)
    expect(resolveClient('2001:db8:1:3::1', null, none)).not.toBe(a)
    expect(resolveClient('2001:db8:2:2::1', null, none)).not.toBe(a)
    expect(resolveClient('192.0.2.1', null, none)).not.toBe(resolveClient('192.0.2.2', null, none))
    // An IPv4-mapped IPv6 peer is the IPv4 client.
    expect(resolveClient('::ffff:192.0.2.1', null, none)).toBe(resolveClient('192.0.2.1', null, none))
  })

  it('believes X-Forwarded-For only from trusted peers, right to left past trusted hops', () => {
    expect(resolveClient('192.0.2.5', '203.0.113.1', none)).toBe(resolveClient('192.0.2.5', null, none))
    expect(resolveClient('192.0.2.5', '203.0.113.1', proxies)).toBe(resolveClient('192.0.2.5', null, none))
    expect(resolveClient('127.0.0.1', '203.0.113.1', proxies)).toBe(resolveClient('203.0.113.1', null, none))
    expect(resolveClient('127.0.0.1', '198.51.100.1, 203.0.113.1, 10.1.2.3', proxies)).toBe(
      resolveClient('203.0.113.1', null, none),
    )
    expect(resolveClient('127.0.0.1', '2001:db8:5:6::1, fd00::1', proxies)).toBe(
      resolveClient('2001:db8:5:6::ffff', null, none),
    )
    // Garbage in the header stops the walk at the last good hop.
    expect(resolveClient('127.0.0.1', 'not-an-ip', proxies)).toBe(resolveClient('127.0.0.1', null, none))
    expect(ipaddr.isValid(resolveClient('10.0.0.1', '', proxies))).toBe(true)
  })
})
