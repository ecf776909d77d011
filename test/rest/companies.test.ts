/**
 * GET /api/v2/companies, /api/v2/companies/{slug} and the jobs list's
 * `company` filter (docs/api.md: Companies), against an oracle written here
 * from the dataset files: live jobs counted per employer by the REST oracle,
 * countries resolved by its own table, words split as MiniSearch splits them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { V2CompanyListResponse, V2CompanyProfile } from '../../core/index.ts'
import type { RunningServer } from '../../runtime/index.ts'
import { FIXTURE_NOW, startFixtureServer } from '../support/fixtures.ts'
import { buildRestFixture, type RestFixture } from './support/fixture.ts'
import { getAllV2, request } from './support/http.ts'
import { countryCode, type RawCompany } from './support/oracle.ts'

let fixture: RestFixture
let server: RunningServer
const now = FIXTURE_NOW.getTime()

beforeAll(async () => {
  fixture = await buildRestFixture({ jobs: 600, companies: 80, seed: 7 })
  server = await startFixtureServer(fixture.distDir, { JOBSNAP_REST_LIMIT: 100_000 })
})

afterAll(async () => {
  await server?.close()
  await fixture?.cleanup()
})

// ---------- the oracle ----------

interface Expected {
  company: RawCompany
  liveJobs: number
}

function liveCounts(): Map<string, number> {
  const counts = new Map<string, number>()
  for (const job of fixture.oracle.live(now)) counts.set(job.company.id, (counts.get(job.company.id) ?? 0) + 1)
  return counts
}

const words = (text: string) =>
  text
    .toLowerCase()
    .split(/[\n\r\p{Z}\p{P}]+/u)
    .filter((w) => w !== '')

interface CompanySpec {
  q?: string
  country?: string[]
  schedule?: string[]
  remote_level?: string[]
  hires_worldwide?: boolean
  sort?: 'name' | 'jobs'
}

const byName = (a: Expected, b: Expected) =>
  a.company.name.localeCompare(b.company.name, 'en', { sensitivity: 'base' }) ||
  (a.company.slug < b.company.slug ? -1 : 1)

function expectedCompanies(spec: CompanySpec): Expected[] {
  const counts = liveCounts()
  const countries = spec.country?.map((c) => countryCode(c))
  const out = fixture.oracle.companies
    .map((company) => ({ company, liveJobs: counts.get(company.id) ?? 0 }))
    .filter(({ company, liveJobs }) => {
      if (liveJobs === 0) return false
      if (countries && !(company.country && countries.includes(countryCode(company.country)))) return false
      if (spec.schedule && !spec.schedule.includes(company.schedule_type)) return false
      if (spec.remote_level && !spec.remote_level.includes(company.remote_level)) return false
      if (spec.hires_worldwide !== undefined && (company.hires_worldwide ?? false) !== spec.hires_worldwide)
        return false
      if (spec.q !== undefined) {
        const own = words(`${company.name} ${(company.short_description as string | undefined) ?? ''}`)
        const ok = words(spec.q).every((w) => (w.length < 3 ? own.includes(w) : own.some((o) => o.startsWith(w))))
        if (!ok) return false
      }
      return true
    })
    .sort(byName)
  if (spec.sort === 'jobs') out.sort((a, b) => b.liveJobs - a.liveJobs || byName(a, b))
  return out
}

function toParams(spec: CompanySpec): URLSearchParams {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(spec)) {
    if (value === undefined) continue
    params.set(key, Array.isArray(value) ? value.join(',') : String(value))
  }
  return params
}

/** Every page of a company list, checking each page's wrapper. */
async function allCompanies(params: URLSearchParams): Promise<V2CompanyProfile[]> {
  const out: V2CompanyProfile[] = []
  for (let page = 1; page < 100; page++) {
    params.set('page', String(page))
    params.set('limit', '7')
    const response = await request<unknown>(`${server.url}/api/v2/companies?${params}`)
    expect(response.status, `?${params}: ${JSON.stringify(response.body).slice(0, 200)}`).toBe(200)
    const body = V2CompanyListResponse.parse(response.body)
    expect(body.page).toBe(page)
    expect(body.limit).toBe(7)
    expect(body.has_more).toBe(page * 7 < body.total)
    out.push(...body.data)
    if (!body.has_more) {
      expect(out).toHaveLength(body.total)
      return out
    }
  }
  throw new Error('runaway paging')
}

async function expectCompanies(spec: CompanySpec): Promise<V2CompanyProfile[]> {
  const expected = expectedCompanies(spec)
  const got = await allCompanies(toParams(spec))
  expect(
    got.map((c) => [c.slug, c.live_jobs]),
    JSON.stringify(spec),
  ).toEqual(expected.map((e) => [e.company.slug, e.liveJobs]))
  return got
}

// ---------- tests ----------

describe('GET /api/v2/companies', () => {
  it('lists every employer with a live job exactly once, by name, with its live job count and profile', async () => {
    const got = await expectCompanies({})
    expect(got.length).toBeGreaterThan(20)
    const bySlug = new Map(fixture.oracle.companies.map((c) => [c.slug, c]))
    const gone = fixture.oracle.companies.filter((c) => !liveCounts().get(c.id))
    expect(gone.length, 'the fixture has an employer whose jobs are all closed').toBeGreaterThan(0)
    for (const profile of got) {
      const raw = bySlug.get(profile.slug)!
      expect(profile).toMatchObject({
        id: raw.id,
        name: raw.name,
        url: raw.url,
        schedule_type: raw.schedule_type,
        remote_level: raw.remote_level,
        hires_worldwide: raw.hires_worldwide ?? false,
        benefits: raw.benefits ?? [],
        jobs_url: `/api/v2/jobs?company=${raw.slug}`,
      })
      if (raw.country) expect(countryCode(profile.country!)).toBe(countryCode(raw.country))
      expect(profile).not.toHaveProperty('description_html')
      expect(profile).not.toHaveProperty('total_raised')
      for (const key of ['day_off', 'vacation_days', 'awards', 'work_life_score'] as const)
        if (raw[key] === undefined) expect(profile, `${raw.slug}: ${key} never invented`).not.toHaveProperty(key)
        else expect(profile[key]).toEqual(raw[key])
    }
  })

  it('sort=jobs puts the most live jobs first, ties by name', async () => {
    await expectCompanies({ sort: 'jobs' })
  })

  it('filters by country (name or code, HQ), schedule, remote_level, hires_worldwide and q, alone and together', async () => {
    const some = expectedCompanies({})
    const withCountry = some.find((e) => e.company.country)!.company
    const word = words(`${some[3]!.company.name}`)[0]!
    const specs: CompanySpec[] = [
      { country: [withCountry.country as string] },
      { country: [countryCode(withCountry.country as string)!.toLowerCase(), 'Atlantis'] },
      { schedule: ['4_day_week'] },
      { schedule: ['compressed_hours', 'standard'] },
      { remote_level: ['fully_remote'] },
      { remote_level: ['onsite', 'remote_friendly'] },
      { hires_worldwide: true },
      { hires_worldwide: false, sort: 'jobs' },
      { q: word },
      { q: word.slice(0, 3) },
      { q: `${word} ${words(some[3]!.company.name).at(-1)}` },
      { q: 'zzzzqqq' },
      { schedule: ['4_day_week', '9_day_fortnight'], remote_level: ['fully_remote', 'remote_friendly'] },
    ]
    let nonEmpty = 0
    for (const spec of specs) if ((await expectCompanies(spec)).length > 0) nonEmpty++
    expect(nonEmpty, 'most filters find something').toBeGreaterThan(specs.length / 2)
  })

  it('answers one employer with the same profile the list gives, and 404 for unknown or job-less ones', async () => {
    const [first] = expectedCompanies({ sort: 'jobs' })
    const list = await allCompanies(new URLSearchParams())
    const one = await request<unknown>(`${server.url}/api/v2/companies/${first!.company.slug}`)
    expect(one.status).toBe(200)
    expect(V2CompanyProfile.parse(one.body)).toEqual(list.find((c) => c.slug === first!.company.slug))
    expect(one.headers.get('etag')).toBeTruthy()

    const gone = fixture.oracle.companies.find((c) => !liveCounts().get(c.id))!
    for (const slug of [gone.slug, 'no-such-company']) {
      const missing = await request<{ error: { code: number; message: string } }>(
        `${server.url}/api/v2/companies/${slug}`,
      )
      expect(missing.status, slug).toBe(404)
      expect(missing.body.error.code).toBe(404)
      expect(missing.body.error.message).toContain('/api/v2/companies')
    }
  })

  it('refuses bad parameters with 400 naming them, and names ignored ones', async () => {
    const cases: [string, string][] = [
      ['remote_level=hybrid', 'remote_level'],
      ['hires_worldwide=yes', 'hires_worldwide'],
      ['sort=salary', 'sort'],
      ['sort=name&sort=jobs', 'sort'],
      ['page=abc', 'page'],
      ['limit=1.5', 'limit'],
      [`q=${'a'.repeat(201)}`, 'q'],
      [`q=${encodeURIComponent('é😀'.repeat(101))}`, 'q'],
    ]
    for (const [query, field] of cases) {
      const response = await request<{ error: { field?: string; message: string } }>(
        `${server.url}/api/v2/companies?${query}`,
      )
      expect(response.status, query).toBe(400)
      expect(response.body.error.field, query).toBe(field)
      expect(response.headers.get('cache-control')).toBe('no-store')
    }
    const emoji = await request<unknown>(`${server.url}/api/v2/companies?q=${encodeURIComponent('😀'.repeat(150))}`)
    expect(emoji.status, 'q of 150 emoji is 150 characters').toBe(200)
    const ignored = await request<unknown>(`${server.url}/api/v2/companies?contry=DE&limit=2`)
    expect(ignored.status).toBe(200)
    expect(ignored.headers.get('x-ignored-parameters')).toBe('contry')
  })

  it('clamps paging like the jobs list, caches with an ETag, and counts against the rate limit', async () => {
    const big = await request<{ limit: number; data: unknown[] }>(`${server.url}/api/v2/companies?limit=500&page=-3`)
    expect(big.status).toBe(200)
    expect(big.body.limit).toBe(100)
    const past = await request<{ data: unknown[]; has_more: boolean }>(`${server.url}/api/v2/companies?page=999`)
    expect(past.body).toMatchObject({ data: [], has_more: false })

    const url = `${server.url}/api/v2/companies?schedule=standard&limit=3`
    const first = await request<unknown>(url)
    const again = await request<unknown>(url)
    expect(again.headers.get('x-cache')).toBe('HIT')
    expect(first.headers.get('x-ratelimit-limit')).toBeTruthy()
    expect(first.headers.get('x-api-version')).toBe('v2')
    const etag = first.headers.get('etag')!
    // The same encoding as the first answer (request() asks for identity): each encoding has its own tag.
    const notModified = await fetch(url, { headers: { 'if-none-match': etag, 'accept-encoding': 'identity' } })
    expect(notModified.status).toBe(304)
  })
})

describe('GET /api/v2/jobs?company=', () => {
  it('keeps the jobs of the named employers (slugs, any case, a list matching any), as the oracle does', async () => {
    const [a, b] = expectedCompanies({ sort: 'jobs' })
    for (const company of [[a!.company.slug], [a!.company.slug.toUpperCase(), b!.company.slug]]) {
      const { jobs } = await getAllV2(server.url, new URLSearchParams({ company: company.join(',') }))
      const expected = fixture.oracle.query({ company }, now)
      expect(jobs.map((j) => j.slug)).toEqual(expected.map((j) => j.raw.slug))
      expect(jobs.length).toBeGreaterThan(0)
    }
    const unknown = await getAllV2(server.url, new URLSearchParams({ company: 'no-such-company' }))
    expect(unknown.total).toBe(0)
    // The profile's jobs_url lists exactly its live_jobs.
    const profile = V2CompanyProfile.parse(
      (await request<unknown>(`${server.url}/api/v2/companies/${a!.company.slug}`)).body,
    )
    const viaLink = await request<{ total: number }>(`${server.url}${profile.jobs_url}`)
    expect(viaLink.body.total).toBe(profile.live_jobs)
  })
})
