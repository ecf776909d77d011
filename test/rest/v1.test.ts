/**
 * GET /api/v1, the legacy list (docs/api.md: v1; shapes in core/schema/api.ts),
 * through a real server: only page and limit count, junk falls back,
 * clamping, paging to the end, agreement with v2, labels, caching headers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../../runtime/index.ts'
import { FIXTURE_NOW, startFixtureServer } from '../support/fixtures.ts'
import { buildRestFixture, type RestFixture } from './support/fixture.ts'
import {
  expectRateLimitHeaders,
  getAllV2,
  request,
  type JsonResponse,
  type V1ListResponse,
  type V2Job,
} from './support/http.ts'

const NOW = FIXTURE_NOW.getTime()
const LIMIT = 100_000
type V1Job = V1ListResponse['jobs'][number]

let fixture: RestFixture
let server: RunningServer
let base: string
let liveTotal: number
let v2All: V2Job[]

beforeAll(async () => {
  fixture = await buildRestFixture({ jobs: 600, companies: 80, seed: 5 })
  server = await startFixtureServer(fixture.distDir, { JOBSNAP_REST_LIMIT: LIMIT })
  base = server.url
  liveTotal = fixture.oracle.live(NOW).length
  v2All = (await getAllV2(base, new URLSearchParams())).jobs
})

afterAll(async () => {
  await server?.close()
  await fixture?.cleanup()
})

async function v1(query = ''): Promise<JsonResponse<V1ListResponse>> {
  const res = await request<V1ListResponse>(`${base}/api/v1${query ? `?${query}` : ''}`)
  expect(res.status, `/api/v1?${query}`).toBe(200)
  expect(res.headers.get('x-api-version')).toBe('v1')
  return res
}

/** Every job of v1 with one page size, following has_more. */
async function allV1(limit: number | undefined): Promise<V1Job[]> {
  const jobs: V1Job[] = []
  const size = limit ?? 25
  for (let page = 1; ; page++) {
    const { body } = await v1(limit === undefined ? `page=${page}` : `page=${page}&limit=${limit}`)
    expect(body.page).toBe(page)
    expect(body.total).toBe(liveTotal)
    expect(body.has_more).toBe(page * size < body.total)
    expect(body.jobs.length).toBe(Math.min(size, liveTotal - (page - 1) * size))
    jobs.push(...body.jobs)
    if (!body.has_more) break
  }
  return jobs
}

// The fixed legacy labels ("Engineering", "Senior", "Mid-level", "4 day week"); others title-cased.
const titleCase = (slug: string) =>
  slug
    .split(/[-_]/)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join(' ')
const levelLabel = (slug: string) => (slug === 'mid' ? 'Mid-level' : titleCase(slug))
const REMOTE_LEVEL_LABELS: Record<string, string> = {
  fully_remote: '100% remote',
  remote_friendly: 'Offers remote',
  onsite: 'Onsite',
}

describe('wrapper and paging', () => {
  it('has {usage, page, total, has_more, jobs}; usage asks for a link back to the configured site', async () => {
    const { body, headers } = await v1()
    expect(Object.keys(body).sort()).toEqual(['has_more', 'jobs', 'page', 'total', 'usage'])
    expect(body.page).toBe(1)
    expect(body.total).toBe(liveTotal)
    expect(body.jobs).toHaveLength(25)
    expect(body.has_more).toBe(true)
    expect(body.usage).toContain('https://jobsnap.example')
    expect(body.usage.toLowerCase()).toContain('free')
    expect(body.usage.toLowerCase()).toMatch(/link/)
    // One sentence.
    expect(
      body.usage
        .trim()
        .split(/[.!?](\s|$)/)
        .filter((s) => s.trim() !== '').length,
    ).toBe(1)
    expect(headers.get('cache-control')).toBe('public, max-age=60')
    expectRateLimitHeaders(headers, LIMIT)
  })

  it('iterating page=1..N until has_more is false gets every live job once, in v2 default order', async () => {
    const expected = fixture.oracle.live(NOW).map((j) => j.raw.id)
    expect(v2All.map((j) => j.id)).toEqual(expected)
    for (const limit of [undefined, 25, 100, 7, 1]) {
      if (limit === 1) {
        // One job a page: check the first and a window near the end rather than all pages.
        const first = await v1('limit=1')
        expect(first.body.jobs.map((j) => j.id_str)).toEqual([expected[0]])
        const last = await v1(`limit=1&page=${liveTotal}`)
        expect(last.body.jobs.map((j) => j.id_str)).toEqual([expected.at(-1)])
        expect(last.body.has_more).toBe(false)
        expect((await v1(`limit=1&page=${liveTotal - 1}`)).body.has_more).toBe(true)
        continue
      }
      const ids = (await allV1(limit)).map((j) => j.id_str)
      expect(ids, `limit=${limit}`).toEqual(expected)
    }
  })

  it('has_more is page * limit < total, past the end too', async () => {
    for (const [page, limit] of [
      [1, 100],
      [Math.ceil(liveTotal / 100), 100],
      [2, liveTotal],
      [1, liveTotal],
      [50, 100],
      [3, 50],
    ] as const) {
      const clamped = Math.min(limit, 100)
      const { body } = await v1(`page=${page}&limit=${limit}`)
      expect(body.has_more, `page=${page}&limit=${limit}`).toBe(page * clamped < liveTotal)
      expect(body.jobs.length).toBe(Math.max(0, Math.min(clamped, liveTotal - (page - 1) * clamped)))
    }
    const past = await v1('page=999')
    expect(past.body.jobs).toEqual([])
    expect(past.body.has_more).toBe(false)
    expect(past.body.page).toBe(999)
    expect(past.body.total).toBe(liveTotal)
  })
})

describe('only page and limit are honoured', () => {
  it('every other parameter is ignored, v2 filters included', async () => {
    const plain = await v1()
    const noisy = await v1(
      'category=engineering&level=senior&sort=salary&q=python&country=DE&salary_min=999999&work_arrangement=bogus&foo=bar',
    )
    expect(noisy.text).toBe(plain.text)
    const plain2 = await v1('page=2&limit=10')
    const noisy2 = await v1('page=2&sort=nope&limit=10&posted_after=-1&skills=go')
    expect(noisy2.text).toBe(plain2.text)
  })

  it('is lenient: junk falls back to the defaults, never 400', async () => {
    const defaults = await v1()
    for (const query of [
      'page=abc',
      'limit=abc',
      'page=1.5&limit=2.5',
      'page=&limit=',
      'page=%20&limit=1e2',
      'page=0x2&limit=ten',
      'page=NaN',
    ]) {
      const res = await v1(query)
      expect(res.text, query).toBe(defaults.text)
    }
    const junkLimit = await v1('page=2&limit=x')
    expect(junkLimit.body.page).toBe(2)
    expect(junkLimit.body.jobs).toHaveLength(25)
  })

  it('clamps out-of-range values', async () => {
    const first = await v1()
    for (const page of ['0', '-1', '-999']) expect((await v1(`page=${page}`)).text).toBe(first.text)
    expect((await v1('limit=0')).body.jobs).toHaveLength(1)
    expect((await v1('limit=-20')).body.jobs).toHaveLength(1)
    const big = await v1('limit=500')
    expect(big.body.jobs).toHaveLength(100)
    expect(big.text).toBe((await v1('limit=100')).text)
  })
})

describe('v1 and v2 agree on every job', () => {
  it('ids, epoch seconds, labels, filters union, company fields', async () => {
    const v1Jobs = await allV1(100)
    const v2ById = new Map(v2All.map((j) => [j.id, j]))
    const rawCompany = new Map(fixture.oracle.companies.map((c) => [c.id, c]))
    for (const job of v1Jobs) {
      const v2 = v2ById.get(job.id_str)!
      const raw = fixture.oracle.byId.get(job.id_str)!
      expect(v2, job.slug).toBeDefined()
      expect(job.title).toBe(v2.title)
      expect(job.slug).toBe(v2.slug)
      expect(job.url).toBe(v2.url)
      expect(job.description).toBe(v2.description ?? '')
      expect(job.description).not.toMatch(/<\/?[a-z][^>]*>/i)
      expect(job.role).toBe(v2.role ?? '')
      expect(job.posted).toBe(Math.floor(Date.parse(v2.posted_at) / 1000))
      expect(job.posted).toBe(Math.floor(raw.postedMs / 1000))
      expect(job.category).toBe(v2.category ? titleCase(v2.category) : '')
      expect(job.level).toBe(v2.level ? levelLabel(v2.level) : '')
      expect(job.is_remote).toBe(v2.is_remote)
      expect(job.is_remote).toBe(v2.work_arrangement !== 'onsite')
      // Union of skills, stack and tools, first of each slug, in that order.
      const union: { label: string; value: string }[] = []
      for (const tag of [...(v2.skills ?? []), ...(v2.stack ?? []), ...(v2.tools ?? [])]) {
        if (!union.some((t) => t.value === tag.slug)) union.push({ label: tag.name, value: tag.slug })
      }
      expect(job.filters).toEqual(union)
      // Weekly hours: within the job's published range when it has one.
      expect(Number.isInteger(job.hours)).toBe(true)
      if (v2.hours_per_week_max !== undefined) expect(job.hours).toBe(v2.hours_per_week_max)
      else if (v2.hours_per_week_min !== undefined) expect(job.hours).toBe(v2.hours_per_week_min)
      // Readable schedule text, the job's own or its employer's.
      const schedule = raw.schedule
      expect(job.reduced_hours).not.toMatch(/_/)
      if (schedule === '4_day_week') expect(job.reduced_hours).toBe('4 day week')
      if (schedule === '9_day_fortnight') expect(job.reduced_hours).toBe('9 day fortnight')
      // Location: drawn from the job's own places.
      const countries = [...(v2.office_locations ?? []), ...(v2.remote_allowed ?? [])].map((l) => l.country)
      if (job.location_country !== undefined) expect(countries).toContain(job.location_country)
      if (job.location_city !== undefined)
        expect((v2.office_locations ?? []).map((l) => l.city)).toContain(job.location_city)
      // Company.
      const company = v2.company!
      const rc = rawCompany.get(company.id)!
      expect(job.company_id).toBe(company.id)
      expect(job.company_name).toBe(company.slug)
      expect(job.company.id_str).toBe(company.id)
      expect(job.company.name).toBe(company.name)
      expect(job.company.slug).toBe(company.slug)
      expect(job.company.url).toBe(`${company.url.replace(/\/+$/, '')}/jobs`)
      expect(job.company.company_url).toBe(company.website)
      expect(job.company.remote_level).toBe(REMOTE_LEVEL_LABELS[rc.remote_level])
      expect(job.company.reduced_hours).not.toMatch(/_/)
      expect(job.company).not.toHaveProperty('total_raised')
    }
    expect(v1Jobs).toHaveLength(v2All.length)
  })

  it('never exposes total_raised or an HTML description', async () => {
    // The dataset has both, so their absence means something.
    expect(fixture.oracle.companies.some((c) => c.total_raised !== undefined)).toBe(true)
    expect(fixture.oracle.jobs.some((j) => j.raw.description_html !== undefined)).toBe(true)
    for (const query of ['limit=100', 'limit=100&page=2', 'limit=100&page=3']) {
      const { text } = await v1(query)
      expect(text).not.toContain('total_raised')
      expect(text).not.toContain('description_html')
      expect(text).not.toMatch(/<(p|ul|li|h3|strong)>/)
    }
  })
})

describe('caching headers', () => {
  it('precomputed sizes (25, 100) are HIT at once; other sizes MISS then HIT with the same bytes', async () => {
    // A server of its own, so no earlier test has warmed its cache.
    const fresh = await startFixtureServer(fixture.distDir, { JOBSNAP_REST_LIMIT: LIMIT })
    try {
      const get = (query: string) => request<V1ListResponse>(`${fresh.url}/api/v1${query}`)
      for (const query of ['', '?page=2', '?limit=25&page=3', '?limit=100', '?limit=100&page=2']) {
        const res = await get(query)
        expect(res.headers.get('x-cache'), query).toBe('HIT')
        expect(res.headers.get('etag')).toMatch(/^"[^"]+"$/)
      }
      for (const query of ['?limit=10', '?limit=10&page=3', '?limit=99']) {
        const first = await get(query)
        const second = await get(query)
        expect(first.headers.get('x-cache'), query).toBe('MISS')
        expect(second.headers.get('x-cache'), query).toBe('HIT')
        expect(second.text).toBe(first.text)
        expect(second.headers.get('etag')).toBe(first.headers.get('etag'))
      }
      // Junk that falls back to a precomputed size is that size.
      expect((await get('?limit=junk')).headers.get('x-cache')).toBe('HIT')
    } finally {
      await fresh.close()
    }
  })
})
