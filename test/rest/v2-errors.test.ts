/**
 * Invalid input and the edges of the REST surface (docs/api.md:
 * Parameters (v2), Live, Errors): every 400
 * rule, clamping, 404s (unknown and expired-since-build slugs), 405, HEAD
 * and CORS, through a real server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../../runtime/index.ts'
import { rawGet, targetOf } from '../../support/raw-http.ts'
import { FIXTURE_NOW, startFixtureServer } from '../support/fixtures.ts'
import { buildRestFixture, type RestFixture } from './support/fixture.ts'
import {
  expectErrorResponse,
  expectRateLimitHeaders,
  getAllV2,
  getV2List,
  request,
  type V1ListResponse,
  type V2Job,
} from './support/http.ts'

const NOW = FIXTURE_NOW.getTime()
const LIMIT = 100_000

let fixture: RestFixture
let server: RunningServer
let base: string
let liveTotal: number
let sampleSlug: string

beforeAll(async () => {
  fixture = await buildRestFixture({ jobs: 400, companies: 60, seed: 11 })
  server = await startFixtureServer(fixture.distDir, { JOBSNAP_REST_LIMIT: LIMIT })
  base = server.url
  liveTotal = fixture.oracle.live(NOW).length
  sampleSlug = fixture.oracle.live(NOW)[3]!.raw.slug
})

afterAll(async () => {
  await server?.close()
  await fixture?.cleanup()
})

async function expect400(query: string, field: string, allowedWords: string[] = []): Promise<void> {
  const res = await request(`${base}/api/v2/jobs?${query}`)
  const error = expectErrorResponse(res, 400, field)
  expect(res.headers.get('x-api-version')).toBe('v2')
  expectRateLimitHeaders(res.headers, LIMIT)
  expect(error.message, `${query}: the message names the parameter`).toContain(field)
  for (const word of allowedWords) expect(error.message, `${query}: the message says what is allowed`).toContain(word)
}

describe('400: invalid v2 query parameters', () => {
  it('q with more different words than a search takes: refused, never cut (each word must match)', async () => {
    const words = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima'
    expect((await getV2List(base, `q=${encodeURIComponent(words)}`)).status, '12 words').toBe(200)
    await expect400(`q=${encodeURIComponent(`${words} zzzzqqqq`)}`, 'q', ['at most 12', 'got 13'])
    // The same word twice is one word.
    expect((await getV2List(base, `q=${encodeURIComponent(`${words} alpha`)}`)).status).toBe(200)
    const companies = await request(`${base}/api/v2/companies?q=${encodeURIComponent(`${words} mike`)}`)
    expect(expectErrorResponse(companies, 400, 'q').message).toContain('at most 12')
  })

  it('salary_min above salary_max, compared as sent even past the safe integers', async () => {
    for (const [min, max] of [
      ['9007199254740993', '9007199254740992'],
      ['99999999999999999999', '1'],
    ] as const) {
      const res = await request(`${base}/api/v2/jobs?salary_min=${min}&salary_max=${max}`)
      expect(expectErrorResponse(res, 400, 'salary_min').message).toBe(
        `salary_min (${min.length > 40 ? `${min.slice(0, 40)}...` : min}) must not be greater than salary_max (${max}).`,
      )
    }
    expect((await getV2List(base, 'salary_min=9007199254740992&salary_max=9007199254740993')).status).toBe(200)
  })

  it('page and limit that are not integers', async () => {
    for (const bad of ['abc', '1.5', '1e2', '0x10', '2abc', '--1', '1,2', 'NaN', 'Infinity']) {
      await expect400(`page=${encodeURIComponent(bad)}`, 'page')
      await expect400(`limit=${encodeURIComponent(bad)}`, 'limit')
    }
  })

  it('integers too large to hold are still integers: the clamps apply', async () => {
    const huge = '99999999999999999999'
    const limit = await getV2List(base, `limit=${huge}`)
    expect(limit.status).toBe(200)
    expect(limit.body).toMatchObject({ limit: 100 })
    const page = await getV2List(base, `page=${huge}`)
    expect(page.status).toBe(200)
    expect(page.body).toMatchObject({ data: [], has_more: false })
    const posted = await getV2List(base, `posted_after=${huge}&limit=1`)
    const year = await getV2List(base, 'posted_after=365&limit=1')
    expect(posted.status).toBe(200)
    expect((posted.body as { total: number }).total).toBe((year.body as { total: number }).total)
    const salary = await getV2List(base, `salary_min=${huge}`)
    expect(salary.status).toBe(200)
    expect(salary.body).toMatchObject({ total: 0, data: [] })
  })

  it('a single-valued parameter given twice: the same value is that value, different values are a 400 naming it', async () => {
    expect((await getV2List(base, 'limit=5&limit=5')).status).toBe(200)
    // One value in two spellings (letter case, as values are matched; leading zeros) is that value.
    for (const query of [
      'sort=date&sort=DATE',
      'page=1&page=01',
      'limit=05&limit=5',
      'q=Engineer&q=engineer',
      'q=z%C3%BCrich&q=zurich',
    ]) {
      const same = await getV2List(base, query)
      expect(same.status, query).toBe(200)
    }
    const companies = await fetch(`${base}/api/v2/companies?hires_worldwide=true&hires_worldwide=TRUE`)
    expect(companies.status).toBe(200)
    expect((await getV2List(base, 'limit=5&limit=05')).body).toMatchObject({ limit: 5 })
    for (const [query, field] of [
      ['sort=salary&sort=date', 'sort'],
      ['limit=5&limit=6', 'limit'],
      ['page=1&page=2', 'page'],
      ['q=engineer&q=designer', 'q'],
      ['salary_min=1&salary_min=2', 'salary_min'],
      ['posted_after=7&posted_after=30', 'posted_after'],
      // Both past the safe integers, both clamped alike for matching, but different numbers all the same.
      ['salary_min=9007199254740993&salary_min=99999999999999999999', 'salary_min'],
    ] as const)
      await expect400(query, field)
  })

  it('names the parameters it ignores in X-Ignored-Parameters, and only then', async () => {
    const misspelt = await fetch(`${base}/api/v2/jobs?locaton=DE&limit=1&utm_source=x&utm_source=y`)
    expect(misspelt.status).toBe(200)
    expect(misspelt.headers.get('x-ignored-parameters')).toBe('locaton, utm_source')
    expect(misspelt.headers.get('access-control-expose-headers')).toContain('X-Ignored-Parameters')
    const clean = await fetch(`${base}/api/v2/jobs?country=DE&limit=1`)
    expect(clean.headers.get('x-ignored-parameters')).toBeNull()
    // A parameter without a name has none to list: no empty header.
    const nameless = await fetch(`${base}/api/v2/jobs?=x&limit=1`)
    expect(nameless.headers.get('x-ignored-parameters')).toBeNull()
  })

  it('redirects a trailing slash or other spelling (308) to the canonical path, query kept', async () => {
    for (const [from, to] of [
      ['/api/v1/?page=2', '/api/v1?page=2'],
      ['/api/v2/jobs/?level=senior&limit=3', '/api/v2/jobs?level=senior&limit=3'],
      ['/api/v2/jobs/some-slug/', '/api/v2/jobs/some-slug'],
      ['//api/v1?page=2', '/api/v1?page=2'],
      ['/API/V1', '/api/v1'],
      ['/api/v2/Jobs?limit=1', '/api/v2/jobs?limit=1'],
      ['/api/v2/jobs//some-slug', '/api/v2/jobs/some-slug'],
      ['/Api/V2/Companies/Some-Company/', '/api/v2/companies/Some-Company'],
      ['/api//v2/filters', '/api/v2/filters'],
      ['/feeds/jobs.rss/', '/feeds/jobs.rss'],
      ['/FEEDS/Jobs.json?category=x', '/feeds/jobs.json?category=x'],
      ['//feeds/jobs.atom', '/feeds/jobs.atom'],
    ]) {
      const response = await fetch(`${base}${from}`, { redirect: 'manual' })
      expect(response.status, from).toBe(308)
      expect(response.headers.get('location'), from).toBe(to)
      expect(response.headers.get('x-ratelimit-remaining'), from).not.toBeNull()
    }
    // The OpenAPI document too, which is not rate limited; a preflight, which cannot follow a redirect, is answered.
    for (const from of ['/openapi.yaml/', '/OpenAPI.yaml', '//openapi.yaml']) {
      const response = await fetch(`${base}${from}`, { redirect: 'manual' })
      expect(response.status, from).toBe(308)
      expect(response.headers.get('location'), from).toBe('/openapi.yaml')
      expect(response.headers.get('x-ratelimit-remaining'), from).toBeNull()
    }
    expect((await fetch(`${base}/openapi.yaml/`, { method: 'OPTIONS' })).status).toBe(204)
    // The MCP endpoint: a POST redirected with 308 keeps its method and body (fetch, and so the SDK, follows it).
    const ping = { method: 'POST', body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' }
    const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
    for (const from of ['/api/mcp/', '/API/MCP', '//api/mcp']) {
      const response = await fetch(`${base}${from}`, { ...ping, headers: mcpHeaders, redirect: 'manual' })
      expect(response.status, from).toBe(308)
      expect(response.headers.get('location'), from).toBe('/api/mcp')
    }
    const followed = await fetch(`${base}/api/mcp/`, { ...ping, headers: mcpHeaders })
    expect(await followed.json()).toEqual({ jsonrpc: '2.0', id: 1, result: {} })
    // A slug in other letters is another slug, and a path that is no REST path is no other spelling of one.
    for (const path of ['/api/v2/jobs/Some-Slug', '/api/v3/jobs', '/api/mcp/tools', '/api/v2/jobs/a/b'])
      expect((await fetch(`${base}${path}`, { redirect: 'manual' })).status, path).toBe(404)
  })

  it('redirects dot segments and escaped letters as sent on the wire (a browser would resolve them first)', async () => {
    const target = targetOf(base)
    for (const [from, to] of [
      ['/api/v2/./jobs?limit=1', '/api/v2/jobs?limit=1'],
      ['/api/x/../v1', '/api/v1'],
      ['/./api/v1', '/api/v1'],
      ['/feeds/./jobs.rss', '/feeds/jobs.rss'],
      ['/api/v2/%2e/jobs', '/api/v2/jobs'],
      [`/api/v2/jobs/%2E/${sampleSlug}`, `/api/v2/jobs/${sampleSlug}`],
      ['/%6Fpenapi.yaml', '/openapi.yaml'],
      ['/openapi.yam%6c?x=1', '/openapi.yaml?x=1'],
      ['/api/v2/jobs//..', '/api/v2/jobs'],
    ]) {
      const response = await rawGet(target, from!)
      expect(response.status, from).toBe(308)
      expect(response.headers.location, from).toBe(to)
    }
    // Dot segments that leave the API name no endpoint: not redirected anywhere.
    expect((await rawGet(target, '/api/v2/jobs/../../../etc/passwd')).status).toBe(404)
  })

  it('a 404 anywhere under /api/v1 or /api/v2 is a v1 or v2 answer: counted, with the rate-limit and version headers', async () => {
    for (const [path, version] of [
      ['/api/v2/nope', 'v2'],
      ['/api/v2', 'v2'],
      ['/api/v2/jobs/a/b', 'v2'],
      ['/api/v1/extra', 'v1'],
      ['/api/v2/companies/a/b', 'v2'],
      ['//api/v2/nope', 'v2'],
      ['/API//V1/extra', 'v1'],
    ]) {
      const before = Number((await fetch(`${base}/api/v1`)).headers.get('x-ratelimit-remaining'))
      const response = await request(`${base}${path}`)
      expectErrorResponse(response, 404)
      expect(response.headers.get('x-api-version'), path).toBe(version)
      expectRateLimitHeaders(response.headers, LIMIT)
      expect(Number(response.headers.get('x-ratelimit-remaining')), `${path} counted`).toBe(before - 1)
    }
    // Outside the versions nothing is counted.
    const other = await fetch(`${base}/api/v3/jobs`)
    expect(other.status).toBe(404)
    expect(other.headers.get('x-ratelimit-remaining')).toBeNull()
  })

  it('the documents beside the API (/, /health, /ready, /docs) take GET and HEAD only, like every path', async () => {
    for (const path of ['/', '/health', '/ready', '/docs', '/docs/assets/init.js']) {
      for (const method of ['DELETE', 'POST', 'PUT']) {
        const response = await request(`${base}${path}`, { method })
        expectErrorResponse(response, 405)
        expect(response.headers.get('allow'), `${method} ${path}`).toBe('GET, HEAD, OPTIONS')
      }
      const preflight = await fetch(`${base}${path}`, {
        method: 'OPTIONS',
        headers: { origin: 'https://example.org', 'access-control-request-method': 'GET' },
      })
      expect(preflight.status, `OPTIONS ${path}`).toBe(204)
      expect(preflight.headers.get('access-control-allow-methods')).toBe('GET, HEAD, OPTIONS')
      // HEAD announces GET's length (of one representation: fetch would hide a compressed GET's length).
      const identity = { 'accept-encoding': 'identity' }
      const get = await fetch(`${base}${path}`, { headers: identity })
      const head = await fetch(`${base}${path}`, { method: 'HEAD', headers: identity })
      expect(head.headers.get('content-length'), `HEAD ${path}`).toBe(String((await get.arrayBuffer()).byteLength))
    }
    // The static documents are cached like every successful body: max-age, a strong ETag, 304 on a match.
    for (const path of ['/', '/docs', '/docs/assets/init.js']) {
      const response = await fetch(`${base}${path}`)
      expect(response.headers.get('cache-control'), path).toBe('public, max-age=60')
      expect(response.headers.get('x-cache'), path).toBe('HIT')
      const etag = response.headers.get('etag')
      expect(etag, path).toMatch(/^"[\w-]+"$/)
      const again = await fetch(`${base}${path}`, { headers: { 'if-none-match': etag! } })
      expect(again.status, path).toBe(304)
    }
  })

  it('a 405 carries the rate-limit headers like every other v1 and v2 answer', async () => {
    const response = await fetch(`${base}/api/v2/jobs`, { method: 'DELETE' })
    expect(response.status).toBe(405)
    for (const name of [
      'x-ratelimit-limit',
      'x-ratelimit-remaining',
      'x-ratelimit-reset',
      'ratelimit',
      'ratelimit-policy',
    ])
      expect(response.headers.get(name), name).not.toBeNull()
    expect(response.headers.get('allow')).toBe('GET, HEAD, OPTIONS')
  })

  it('salary_min / salary_max negative or not integers', async () => {
    for (const field of ['salary_min', 'salary_max']) {
      for (const bad of ['-1', '-100000', '1.5', '50000.00', 'abc', '50k', '1e5'])
        await expect400(`${field}=${encodeURIComponent(bad)}`, field)
    }
  })

  it('salary_min greater than salary_max names salary_min', async () => {
    await expect400('salary_min=100001&salary_max=100000', 'salary_min')
    const equal = await getV2List(base, 'salary_min=100000&salary_max=100000')
    expect(equal.status).toBe(200)
  })

  it('posted_after negative or not an integer', async () => {
    for (const bad of ['-1', '-365', '1.5', 'week', '7d'])
      await expect400(`posted_after=${encodeURIComponent(bad)}`, 'posted_after')
  })

  it('work_arrangement outside onsite, hybrid, remote (alone, in a list, or repeated)', async () => {
    for (const query of [
      'work_arrangement=office',
      'work_arrangement=remote,office',
      'work_arrangement=remote&work_arrangement=anywhere',
      'work_arrangement=remote-first',
    ]) {
      await expect400(query, 'work_arrangement', ['onsite', 'hybrid', 'remote'])
    }
  })

  it('a path that cannot be percent-decoded: 400 naming the slug, counted and headed like any other', async () => {
    for (const path of ['/api/v2/jobs/%FF', '/api/v2/jobs/%', '/api/v2/jobs/abc%E0%A4%A', '/api/v2/companies/%ZZ']) {
      const res = await request(`${base}${path}`)
      const error = expectErrorResponse(res, 400, 'slug')
      expect(res.headers.get('x-api-version'), path).toBe('v2')
      expectRateLimitHeaders(res.headers, LIMIT)
      expect(error.message, path).toMatch(/percent-encoding/)
    }
    const v1 = await request(`${base}/api/v1/%FF`)
    expectErrorResponse(v1, 400, 'path')
    expect(v1.headers.get('x-api-version')).toBe('v1')
    // Not another spelling of anything: refused, never redirected to a path that cannot be decoded either.
    const slashed = await fetch(`${base}/api/v2/jobs/%FF/`, { redirect: 'manual' })
    expect(slashed.status).toBe(400)
  })

  it('OPTIONS on a path that cannot be percent-decoded: the same 400 as GET and HEAD, not counted', async () => {
    const preflight = { origin: 'https://example.org', 'access-control-request-method': 'GET' }
    for (const [path, field] of [
      ['/api/v2/jobs/%E0%A4%A', 'slug'],
      ['/api/v2/companies/%ZZ', 'slug'],
      ['/api/v1/%FF', 'path'],
    ] as const) {
      for (const headers of [preflight, {}]) {
        const first = await request(`${base}${path}`, { method: 'OPTIONS', headers })
        const error = expectErrorResponse(first, 400, field)
        expect(error.message, path).toMatch(/percent-encoding/)
        const again = await request(`${base}${path}`, { method: 'OPTIONS', headers })
        expectErrorResponse(again, 400, field)
        // A preflight is never counted: the client's standing is the same after it.
        expect(again.headers.get('x-ratelimit-remaining'), path).toBe(first.headers.get('x-ratelimit-remaining'))
        expectRateLimitHeaders(again.headers, LIMIT)
      }
      const get = await request(`${base}${path}`)
      expect(get.status, `GET ${path}`).toBe(400)
    }
    // A path that decodes is still answered 204, whatever lies behind it.
    const fine = await fetch(`${base}/api/v2/jobs/no-such-job`, { method: 'OPTIONS', headers: preflight })
    expect(fine.status).toBe(204)
  })

  it('sort outside date, salary', async () => {
    for (const bad of ['price', '-date', 'date,salary', 'relevance', 'salary_desc'])
      await expect400(`sort=${encodeURIComponent(bad)}`, 'sort', ['date', 'salary'])
  })

  it('q longer than 200 characters; 200 is fine, counted as characters (an emoji is one), as OpenAPI maxLength counts', async () => {
    await expect400(`q=${'a'.repeat(201)}`, 'q', ['200'])
    await expect400(`q=${encodeURIComponent('😀'.repeat(201))}`, 'q', ['200', '201'])
    const emoji = await getV2List(base, `q=${encodeURIComponent('😀'.repeat(150))}`)
    expect(emoji.status).toBe(200)
    await expect400(`q=${encodeURIComponent('engineer '.repeat(30))}`, 'q')
    const ok = await getV2List(base, `q=${'b'.repeat(200)}`)
    expect(ok.status).toBe(200)
    const words = await getV2List(base, `q=${encodeURIComponent('engineer '.repeat(22).slice(0, 200))}`)
    expect(words.status).toBe(200)
  })

  it('open vocabularies never give 400: an unknown value just matches nothing', async () => {
    const odd = ['astronaut', 'x'.repeat(500), 'ünïcödé', '<script>', "' OR 1=1 --", '%00', '🙂', '..%2F..']
    for (const param of ['category', 'level', 'schedule', 'skills', 'country']) {
      for (const value of odd) {
        const res = await request<{ total: number; data: unknown[] }>(
          `${base}/api/v2/jobs?${param}=${encodeURIComponent(value)}`,
        )
        expect(res.status, `${param}=${value}`).toBe(200)
        expect(res.body.total).toBe(0)
        expect(res.body.data).toEqual([])
      }
    }
  })
})

describe('clamping', () => {
  it('page below 1 is clamped to 1', async () => {
    const first = await getV2List(base, 'limit=10')
    for (const page of ['0', '-1', '-9999']) {
      const res = await getV2List(base, `page=${page}&limit=10`)
      expect(res.body.page).toBe(1)
      expect(res.body.data.map((j) => j.id)).toEqual(first.body.data.map((j) => j.id))
    }
  })

  it('limit below 1 becomes 1 and above 100 becomes 100; the response shows the value used', async () => {
    for (const [asked, used] of [
      ['0', 1],
      ['-5', 1],
      ['1', 1],
      ['100', 100],
      ['101', 100],
      ['100000', 100],
    ] as const) {
      const res = await getV2List(base, `limit=${asked}`)
      expect(res.body.limit, `limit=${asked}`).toBe(used)
      expect(res.body.data).toHaveLength(Math.min(used, liveTotal))
      expect(res.body.has_more).toBe(used < liveTotal)
    }
    const none = await getV2List(base, '')
    expect(none.body.limit).toBe(25)
    expect(none.body.page).toBe(1)
    expect(none.body.data).toHaveLength(25)
  })

  it('a page past the end is 200 with data [] and has_more false', async () => {
    for (const page of [Math.ceil(liveTotal / 25) + 1, 1000, 9_000_000]) {
      const res = await getV2List(base, `page=${page}`)
      expect(res.body).toEqual({ data: [], page, limit: 25, total: liveTotal, has_more: false, next_cursor: null })
    }
    const empty = await getV2List(base, 'category=astronaut')
    expect(empty.body).toEqual({ data: [], page: 1, limit: 25, total: 0, has_more: false, next_cursor: null })
  })

  it('the last page is partial and has_more turns false exactly there', async () => {
    const last = Math.ceil(liveTotal / 25)
    const res = await getV2List(base, `page=${last}`)
    expect(res.body.data).toHaveLength(liveTotal - (last - 1) * 25)
    expect(res.body.has_more).toBe(false)
    expect((await getV2List(base, `page=${last - 1}`)).body.has_more).toBe(true)
  })

  it('posted_after above 365 is capped at 365', async () => {
    const capped = await getV2List(base, 'posted_after=365&limit=100')
    for (const days of ['366', '1000', '99999']) {
      const res = await getV2List(base, `posted_after=${days}&limit=100`)
      expect(res.body.total).toBe(capped.body.total)
      expect(res.text).toBe(capped.text)
    }
  })
})

describe('404 on /api/v2/jobs/{slug}', () => {
  it('an unknown slug gets the error body', async () => {
    for (const slug of [
      'no-such-job',
      'UPPER-CASE',
      'a'.repeat(300),
      'job.json',
      '%2E%2E%2Fmanifest',
      '..%2F..%2Findex%2Fjobs',
      'null',
    ]) {
      const res = await request(`${base}/api/v2/jobs/${slug}`)
      expectErrorResponse(res, 404)
      expect(res.headers.get('x-api-version')).toBe('v2')
      expectRateLimitHeaders(res.headers, LIMIT)
    }
  })

  it('a slug spelled with escapes is redirected to its plain spelling; a 404 names it decoded', async () => {
    const unknown = await request(`${base}/api/v2/jobs/caf%C3%A9-barista`)
    expect(expectErrorResponse(unknown, 404).message).toContain('"café-barista"')
    const escaped = [...sampleSlug].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join('')
    const redirected = await fetch(`${base}/api/v2/jobs/${escaped}?x=1`, { redirect: 'manual' })
    expect(redirected.status).toBe(308)
    expect(redirected.headers.get('location')).toBe(`/api/v2/jobs/${sampleSlug}?x=1`)
    const followed = await request<V2Job>(`${base}/api/v2/jobs/${escaped}`)
    expect(followed.status).toBe(200)
    expect(followed.body.slug).toBe(sampleSlug)
    // Escapes of fixed segments too; an escape that decodes to no slug is not redirected.
    const version = await fetch(`${base}/api/%76%31?page=2`, { redirect: 'manual' })
    expect(version.status).toBe(308)
    expect(version.headers.get('location')).toBe('/api/v1?page=2')
    expect((await fetch(`${base}/api/v2/jobs/a%2Fb`, { redirect: 'manual' })).status).toBe(404)
  })

  it('a known slug is 200 with the job', async () => {
    const res = await request<V2Job>(`${base}/api/v2/jobs/${sampleSlug}`)
    expect(res.status).toBe(200)
    expect(res.body.slug).toBe(sampleSlug)
    expect(res.headers.get('cache-control')).toBe('public, max-age=60')
    expect(res.headers.get('x-api-version')).toBe('v2')
    expectRateLimitHeaders(res.headers, LIMIT)
  })

  it('closed jobs and jobs expired before the build are 404', async () => {
    const closed = fixture.oracle.jobs.find((j) => j.raw.status === 'closed')!
    const expired = fixture.oracle.jobs.find(
      (j) => j.raw.status === 'live' && j.expiresMs !== undefined && j.expiresMs <= NOW,
    )!
    for (const job of [closed, expired]) expectErrorResponse(await request(`${base}/api/v2/jobs/${job.raw.slug}`), 404)
  })
})

describe('a job whose expires_at passes after the build', () => {
  let later: RunningServer
  let expiry: number
  let gone: string[]

  beforeAll(async () => {
    const future = fixture.oracle.live(NOW).filter((j) => j.expiresMs !== undefined)
    expect(future.length).toBeGreaterThan(0)
    expiry = Math.min(...future.map((j) => j.expiresMs!))
    // The same snapshot, served at the first expiry instant: "in the future" no longer holds.
    later = await startFixtureServer(fixture.distDir, { JOBSNAP_REST_LIMIT: LIMIT }, () => expiry)
    gone = future.filter((j) => j.expiresMs! <= expiry).map((j) => j.raw.slug)
  })
  afterAll(async () => {
    await later?.close()
  })

  it('is served before its expiry and 404 from it on', async () => {
    for (const slug of gone) {
      expect((await request(`${base}/api/v2/jobs/${slug}`)).status).toBe(200)
      expectErrorResponse(await request(`${later.url}/api/v2/jobs/${slug}`), 404)
    }
  })

  it('is gone from v2 lists, filtered lists included', async () => {
    const expected = fixture.oracle.live(expiry).map((j) => j.raw.id)
    expect(expected.length).toBe(liveTotal - gone.length)
    const { jobs, total } = await getAllV2(later.url, new URLSearchParams())
    expect(total).toBe(expected.length)
    expect(jobs.map((j) => j.id)).toEqual(expected)
    const goneJob = fixture.oracle.bySlug.get(gone[0]!)!
    const filtered = await getAllV2(later.url, new URLSearchParams({ category: goneJob.raw.category!, sort: 'salary' }))
    expect(filtered.jobs.map((j) => j.slug)).not.toContain(goneJob.raw.slug)
    expect(filtered.total).toBe(fixture.oracle.query({ category: [goneJob.raw.category!] }, expiry).length)
  })

  it('is gone from v1, whose pages and totals close up around it', async () => {
    const expected = fixture.oracle.live(expiry).map((j) => j.raw.id)
    for (const limit of [25, 100, 30]) {
      const seen: string[] = []
      for (let page = 1; ; page++) {
        const res = await request<V1ListResponse>(`${later.url}/api/v1?page=${page}&limit=${limit}`)
        expect(res.status).toBe(200)
        expect(res.body.total).toBe(expected.length)
        expect(res.body.has_more).toBe(page * limit < expected.length)
        seen.push(...res.body.jobs.map((j) => j.id_str))
        if (!res.body.has_more) break
      }
      expect(seen, `limit=${limit}`).toEqual(expected)
    }
  })
})

describe('405 on other methods', () => {
  it('POST, PUT, PATCH and DELETE on every REST path get the error body and Allow', async () => {
    for (const path of ['/api/v1', '/api/v2/jobs', `/api/v2/jobs/${sampleSlug}`, '/api/v2/jobs/no-such-job']) {
      for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
        const res = await request(`${base}${path}`, {
          method,
          body: method === 'DELETE' ? undefined : '{}',
          headers: { 'content-type': 'application/json' },
        })
        expectErrorResponse(res, 405)
        const allow = res.headers.get('allow') ?? ''
        expect(allow).toContain('GET')
        expect(allow).toContain('HEAD')
        expect(allow).not.toContain(method)
      }
    }
  })
})

describe('HEAD works wherever GET does', () => {
  const IGNORED = new Set([
    'date',
    'connection',
    'keep-alive',
    'x-ratelimit-remaining',
    'x-ratelimit-reset',
    'ratelimit',
    'transfer-encoding',
    // Per request by design: each response names its own request.
    'x-request-id',
  ])
  const comparable = (headers: Headers) => Object.fromEntries([...headers].filter(([name]) => !IGNORED.has(name)))

  it('same status and headers as GET, and no body', async () => {
    const paths = [
      '/api/v1',
      '/api/v1?limit=7&page=2',
      '/api/v2/jobs',
      '/api/v2/jobs?category=engineering&sort=salary',
      `/api/v2/jobs/${sampleSlug}`,
      '/api/v2/jobs/no-such-job',
      '/api/v2/jobs?sort=bogus',
      '/openapi.yaml',
      '/health',
      '/docs',
    ]
    for (const path of paths) {
      for (const encoding of ['identity', 'gzip', 'br']) {
        // Warm the response cache so GET and HEAD both see the stored entry.
        await fetch(`${base}${path}`, { headers: { 'accept-encoding': encoding } }).then((r) => r.arrayBuffer())
        const get = await fetch(`${base}${path}`, { headers: { 'accept-encoding': encoding } })
        const getBody = Buffer.from(await get.arrayBuffer())
        const head = await fetch(`${base}${path}`, { method: 'HEAD', headers: { 'accept-encoding': encoding } })
        const headBody = Buffer.from(await head.arrayBuffer())
        expect(head.status, `HEAD ${path}`).toBe(get.status)
        expect(headBody.length, `HEAD ${path} has no body`).toBe(0)
        const getHeaders = comparable(get.headers)
        const headHeaders = comparable(head.headers)
        expect(headHeaders, `HEAD ${path} (${encoding})`).toEqual(getHeaders)
        const announced = get.headers.get('content-length')
        if (get.headers.get('content-encoding') === null && announced !== null)
          expect(Number(announced)).toBe(getBody.length)
      }
    }
  })
})

describe('CORS', () => {
  it('Access-Control-Allow-Origin: * on successes and errors alike', async () => {
    for (const path of [
      '/api/v1',
      '/api/v2/jobs',
      `/api/v2/jobs/${sampleSlug}`,
      '/api/v2/jobs/nope',
      '/api/v2/jobs?sort=x',
      '/openapi.yaml',
    ]) {
      const res = await fetch(`${base}${path}`, { headers: { origin: 'https://example.org' } })
      await res.arrayBuffer()
      expect(res.headers.get('access-control-allow-origin'), path).toBe('*')
      // Browsers may read the headers a client needs.
      const exposed = (res.headers.get('access-control-expose-headers') ?? '').toLowerCase()
      for (const name of ['etag', 'x-cache', 'x-ratelimit-remaining', 'retry-after']) expect(exposed).toContain(name)
    }
  })

  it('a preflight allows GET and HEAD from any origin', async () => {
    for (const path of ['/api/v1', '/api/v2/jobs', `/api/v2/jobs/${sampleSlug}`]) {
      const res = await fetch(`${base}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://example.org',
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'if-none-match',
        },
      })
      expect(res.status).toBeLessThan(300)
      expect(res.headers.get('access-control-allow-origin')).toBe('*')
      const methods = res.headers.get('access-control-allow-methods') ?? ''
      expect(methods).toContain('GET')
      expect(methods).toContain('HEAD')
    }
  })
})
