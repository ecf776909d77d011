/**
 * Facet counts on GET /api/v2/jobs (docs/api.md: Facets), against the REST
 * oracle over the dataset files: each listed count is the number of jobs the
 * oracle finds with that value for that filter and every other filter of the
 * query (disjunctive counting), and no value with jobs is left out below the
 * cap of 100.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../../runtime/index.ts'
import { FIXTURE_NOW, startFixtureServer } from '../support/fixtures.ts'
import { buildRestFixture, type RestFixture } from './support/fixture.ts'
import { request } from './support/http.ts'
import { countryCode, type FilterSpec } from './support/oracle.ts'

let fixture: RestFixture
let server: RunningServer
const now = FIXTURE_NOW.getTime()

beforeAll(async () => {
  fixture = await buildRestFixture({ jobs: 600, companies: 80, seed: 23 })
  server = await startFixtureServer(fixture.distDir, { JOBSNAP_REST_LIMIT: 100_000 })
})

afterAll(async () => {
  await server?.close()
  await fixture?.cleanup()
})

const FACETS = [
  'category',
  'level',
  'schedule',
  'work_arrangement',
  'skills',
  'country',
  'office_country',
  'company',
] as const
type Facet = (typeof FACETS)[number]
type Counts = Record<string, number>

/** Every value a facet could show: what any job of the dataset has. */
function vocabulary(facet: Facet): string[] {
  const jobs = fixture.oracle.jobs
  const values = new Set<string>()
  for (const job of jobs) {
    if (facet === 'category' && job.raw.category) values.add(job.raw.category.toLowerCase())
    if (facet === 'level' && job.raw.level) values.add(job.raw.level.toLowerCase())
    if (facet === 'schedule' && job.schedule) values.add(job.schedule)
    if (facet === 'work_arrangement') values.add(job.raw.work_arrangement)
    if (facet === 'skills') for (const tag of job.tags) values.add(tag)
    if (facet === 'company') values.add(job.company.slug)
    if (facet === 'country')
      for (const place of [...(job.raw.office_locations ?? []), ...(job.raw.remote_allowed ?? [])]) {
        const code = place.country ? countryCode(place.country) : undefined
        if (code) values.add(code)
      }
    if (facet === 'office_country')
      for (const office of job.raw.office_locations ?? []) {
        const code = office.country ? countryCode(office.country) : undefined
        if (code) values.add(code)
      }
  }
  return [...values]
}

/** The counts a facet must show for a query: the oracle run once per value, the facet's own filter replaced. */
function expectedFacet(spec: FilterSpec, facet: Facet): [string, number][] {
  const counted = vocabulary(facet).map((value): [string, number] => {
    const withValue: FilterSpec = facet === 'country' ? { ...spec, country: value } : { ...spec, [facet]: [value] }
    return [value, fixture.oracle.query(withValue, now).length]
  })
  return counted
    .filter(([, count]) => count > 0)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, 100)
}

function toParams(spec: FilterSpec): URLSearchParams {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(spec))
    if (value !== undefined) params.set(key, Array.isArray(value) ? value.join(',') : String(value))
  return params
}

async function facetsOf(params: URLSearchParams): Promise<{ total: number; facets: Record<string, Counts> }> {
  const response = await request<{ total: number; facets: Record<string, Counts> }>(
    `${server.url}/api/v2/jobs?${params}`,
  )
  expect(response.status, `?${params}`).toBe(200)
  return response.body
}

describe('facets on the v2 list', () => {
  it('counts every facet disjunctively, exactly as the oracle does, for a spread of queries', async () => {
    const live = fixture.oracle.live(now)
    const pick = <T>(values: (T | undefined)[], i: number) => values.filter((v): v is T => v !== undefined)[i]!
    const category = pick(
      live.map((j) => j.raw.category),
      0,
    )
    const level = pick(
      live.map((j) => j.raw.level),
      2,
    )
    const skill = [...live[5]!.tags][0]!
    const company = live[9]!.company.slug
    const specs: FilterSpec[] = [
      {},
      { category: [category] },
      { category: [category], schedule: ['standard', '4_day_week'] },
      { skills: [skill], work_arrangement: ['remote'] },
      { country: 'DE', level: [level] },
      { office_country: ['DE', 'FR'], level: [level] },
      { office_country: ['DE'], country: 'FR' },
      { company: [company] },
      { salary_min: 60_000, posted_after: 30 },
      { category: ['no-such-category'] },
    ]
    for (const spec of specs) {
      const params = toParams(spec)
      params.set('facets', FACETS.join(','))
      params.set('limit', '1')
      const body = await facetsOf(params)
      expect(body.total, `?${params}`).toBe(fixture.oracle.query(spec, now).length)
      expect(Object.keys(body.facets)).toEqual([...FACETS])
      for (const facet of FACETS)
        expect(Object.entries(body.facets[facet]!), `${facet} for ?${params}`).toEqual(expectedFacet(spec, facet))
    }
  })

  it('shows the alternatives to a chosen value: its own filter does not narrow its facet', async () => {
    const all = await facetsOf(new URLSearchParams({ facets: 'schedule' }))
    const chosen = await facetsOf(new URLSearchParams({ facets: 'schedule,level', schedule: '4_day_week' }))
    expect(chosen.facets.schedule).toEqual(all.facets.schedule)
    expect(Object.keys(chosen.facets.schedule!).length).toBeGreaterThan(1)
    expect(chosen.total).toBe(all.facets.schedule!['4_day_week'])
    // Another facet is narrowed by the chosen schedule.
    const levels = Object.values(chosen.facets.level!).reduce((sum, n) => sum + n, 0)
    expect(levels).toBeLessThanOrEqual(chosen.total)
  })

  it('is absent unless asked for; names are case-insensitive, repeatable, and checked', async () => {
    const plain = await facetsOf(new URLSearchParams({ limit: '1' }))
    expect(plain).not.toHaveProperty('facets')
    const mixed = await facetsOf(
      new URLSearchParams([
        ['facets', 'Category'],
        ['facets', 'category,LEVEL'],
      ]),
    )
    expect(Object.keys(mixed.facets)).toEqual(['category', 'level'])
    const bad = await request<{ error: { field: string; message: string } }>(`${server.url}/api/v2/jobs?facets=salary`)
    expect(bad.status).toBe(400)
    expect(bad.body.error.field).toBe('facets')
    for (const name of FACETS) expect(bad.body.error.message).toContain(name)
  })

  it('counts over every match even when the page is past the end, and caches per facet list', async () => {
    const url = `${server.url}/api/v2/jobs?facets=work_arrangement&page=999`
    const first = await request<{ data: unknown[]; facets: Record<string, Counts> }>(url)
    expect(first.body.data).toEqual([])
    const sum = Object.values(first.body.facets.work_arrangement!).reduce((a, b) => a + b, 0)
    expect(sum).toBe(fixture.oracle.live(now).length)
    const again = await request<unknown>(url)
    expect(again.headers.get('x-cache')).toBe('HIT')
    const other = await request<unknown>(`${server.url}/api/v2/jobs?facets=level&page=999`)
    expect(other.headers.get('x-cache')).toBe('MISS')
  })
})
