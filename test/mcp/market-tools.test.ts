/**
 * list_filters and get_salary_benchmarks (docs/agents.md) through the SDK
 * Client against a real server. Oracles: GET /api/v2/filters of the same
 * server for the vocabularies (itself checked against the dataset in
 * test/rest/filters.test.ts), and the brute-force REST oracle over the
 * dataset files for the salary percentiles: its own annualising and
 * currency conversion, its own matching of the filters, and the percentile
 * arithmetic written out below.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { V2FiltersResponse } from '../../core/index.ts'
import type { RunningServer } from '../../runtime/index.ts'
import { FIXTURE_NOW, startFixtureServer } from '../support/fixtures.ts'
import { buildRestFixture, type RestFixture } from '../rest/support/fixture.ts'
import { countryCode, type FilterSpec } from '../rest/support/oracle.ts'
import { callError, callInvalid, callOk, connectMcp, type McpSession } from './support/mcp.ts'

interface FilterValue {
  value: string
  label?: string
  jobs: number
}
interface ListFiltersResult {
  as_of: string
  filters: Record<string, FilterValue[]>
}
interface Percentiles {
  jobs_with_salary: number
  p10?: number
  p25?: number
  median?: number
  p75?: number
  p90?: number
}
interface BenchmarksResult {
  as_of: string
  exchange_rates_as_of: string
  live_jobs_matched: number
  salary: Percentiles
  groups?: Record<string, Percentiles>
  caveats: string[]
}

let fixture: RestFixture
let server: RunningServer
let mcp: McpSession
let rest: V2FiltersResponse
const now = FIXTURE_NOW.getTime()

beforeAll(async () => {
  fixture = await buildRestFixture({ jobs: 600, companies: 80, seed: 11 })
  server = await startFixtureServer(fixture.distDir, { JOBSNAP_REST_LIMIT: 100_000, JOBSNAP_MCP_BURST: 100_000 })
  mcp = await connectMcp(server.url)
  rest = V2FiltersResponse.parse(await (await fetch(`${server.url}/api/v2/filters`)).json())
})

afterAll(async () => {
  await mcp?.close()
  await server?.close()
  await fixture?.cleanup()
})

describe('list_filters', () => {
  const ARGUMENTS = [
    'schedule',
    'category',
    'level',
    'work_arrangement',
    'skills',
    'country',
    'office_country',
  ] as const

  it('lists every search_jobs filter with the values and counts GET /api/v2/filters has', async () => {
    const { structured } = await callOk<ListFiltersResult>(mcp, 'list_filters', {})
    expect(Object.keys(structured.filters)).toEqual([...ARGUMENTS])
    for (const name of ARGUMENTS) {
      const expected = rest[name].map(({ value, jobs, ...rest }) =>
        'label' in rest ? { value, label: rest.label, jobs } : { value, jobs },
      )
      expect(structured.filters[name], name).toEqual(expected)
    }
    expect(structured.filters.skills!.length, 'the dataset has skills to list').toBeGreaterThan(5)
  })

  it('gives one filter on request, and each listed value finds exactly its count through search_jobs', async () => {
    const { structured } = await callOk<ListFiltersResult>(mcp, 'list_filters', { filter: 'skills' })
    expect(Object.keys(structured.filters)).toEqual(['skills'])
    for (const entry of structured.filters.skills!.slice(0, 5)) {
      const found = await callOk<{ total: number }>(mcp, 'search_jobs', { skills: [entry.value] })
      expect(found.structured.total, entry.value).toBe(entry.jobs)
    }
    const { structured: countries } = await callOk<ListFiltersResult>(mcp, 'list_filters', { filter: 'country' })
    const first = countries.filters.country![0]!
    expect(first.label, 'a country carries its name').toBeTruthy()
    const byName = await callOk<{ total: number }>(mcp, 'search_jobs', { country: first.label })
    expect(byName.structured.total).toBe(first.jobs)
    const { structured: offices } = await callOk<ListFiltersResult>(mcp, 'list_filters', { filter: 'office_country' })
    const office = offices.filters.office_country![0]!
    const byOffice = await callOk<{ total: number }>(mcp, 'search_jobs', { office_country: [office.label] })
    expect(byOffice.structured.total).toBe(office.jobs)
  })

  it('refuses a filter name it does not list, naming those it does', async () => {
    const message = await callInvalid(mcp, 'list_filters', { filter: 'region' })
    for (const name of ARGUMENTS) expect(message).toContain(name)
    expect(await callInvalid(mcp, 'list_filters', { limit: 5 })).toMatch(/unknown argument "limit"/)
  })
})

// ---------- the percentile oracle ----------

/** R-7 (linear between closest ranks), then whole dollars. */
function percentile(sorted: number[], q: number): number {
  const position = (sorted.length - 1) * q
  const lower = sorted[Math.floor(position)]!
  const upper = sorted[Math.ceil(position)]!
  return Math.round(lower + (upper - lower) * (position - Math.floor(position)))
}

function expectedPercentiles(spec: FilterSpec): { matched: number; salary: Percentiles } {
  const jobs = fixture.oracle.query(spec, now)
  const midpoints = jobs.flatMap((job) => (job.salary ? [(job.salary.low + job.salary.high) / 2] : []))
  midpoints.sort((a, b) => a - b)
  if (midpoints.length < 5) return { matched: jobs.length, salary: { jobs_with_salary: midpoints.length } }
  const [p10, p25, median, p75, p90] = [0.1, 0.25, 0.5, 0.75, 0.9].map((q) => percentile(midpoints, q))
  return { matched: jobs.length, salary: { jobs_with_salary: midpoints.length, p10, p25, median, p75, p90 } }
}

/** Dollar figures may differ by one from float summation order; counts may not differ at all. */
function expectClose(actual: Percentiles | undefined, expected: Percentiles, label: string): void {
  expect(actual, label).toBeDefined()
  expect(Object.keys(actual!).sort(), label).toEqual(Object.keys(expected).sort())
  expect(actual!.jobs_with_salary, label).toBe(expected.jobs_with_salary)
  for (const key of ['p10', 'p25', 'median', 'p75', 'p90'] as const) {
    if (expected[key] === undefined) continue
    expect(
      Math.abs(actual![key]! - expected[key]!),
      `${label} ${key}: ${actual![key]} vs ${expected[key]}`,
    ).toBeLessThanOrEqual(1)
  }
}

describe('get_salary_benchmarks', () => {
  it('gives percentiles of every live published salary, with the build and exchange-rate dates and caveats', async () => {
    const { structured, text } = await callOk<BenchmarksResult>(mcp, 'get_salary_benchmarks', {})
    const expected = expectedPercentiles({})
    expect(structured.live_jobs_matched).toBe(expected.matched)
    expectClose(structured.salary, expected.salary, 'all jobs')
    const s = structured.salary
    expect(s.p10! <= s.p25! && s.p25! <= s.median! && s.median! <= s.p75! && s.p75! <= s.p90!).toBe(true)
    expect(structured.exchange_rates_as_of).toBe(fixture.oracle.rates.as_of)
    expect(structured.as_of.startsWith(FIXTURE_NOW.toISOString().slice(0, 10))).toBe(true)
    expect(structured.caveats.join(' ')).toMatch(/midpoint/)
    expect(structured.groups).toBeUndefined()
    for (const caveat of structured.caveats) expect(text).toContain(caveat)
  })

  it('filters by category, level, country and schedule as search_jobs does', async () => {
    const live = fixture.oracle.live(now)
    const category = live.find((j) => j.raw.category)!.raw.category!
    const level = live.find((j) => j.raw.level)!.raw.level!
    const cases: [Record<string, string>, FilterSpec][] = [
      [{ category }, { category: [category] }],
      [{ level }, { level: [level] }],
      [{ schedule: 'standard' }, { schedule: ['standard'] }],
      [{ country: 'Germany' }, { country: 'DE' }],
      [
        { country: 'us', category },
        { country: 'US', category: [category] },
      ],
      [
        { category, level, schedule: 'standard' },
        { category: [category], level: [level], schedule: ['standard'] },
      ],
    ]
    for (const [args, spec] of cases) {
      const { structured } = await callOk<BenchmarksResult>(mcp, 'get_salary_benchmarks', args)
      const expected = expectedPercentiles(spec)
      expect(structured.live_jobs_matched, JSON.stringify(args)).toBe(expected.matched)
      expectClose(structured.salary, expected.salary, JSON.stringify(args))
      const search = await callOk<{ total: number }>(mcp, 'search_jobs', {
        ...args,
        ...(args.category && { category: [args.category] }),
        ...(args.level && { level: [args.level] }),
        ...(args.schedule && { schedule: [args.schedule] }),
      })
      expect(search.structured.total, `the same jobs search_jobs finds for ${JSON.stringify(args)}`).toBe(
        expected.matched,
      )
    }
  })

  it('splits by each grouping, largest samples first, every group as its own filter gives it', async () => {
    for (const group_by of ['category', 'level', 'schedule', 'country'] as const) {
      const { structured } = await callOk<BenchmarksResult>(mcp, 'get_salary_benchmarks', { group_by })
      const groups = Object.entries(structured.groups ?? {})
      expect(groups.length, group_by).toBeGreaterThan(1)
      expect(groups.length).toBeLessThanOrEqual(30)
      const sizes = groups.map(([, p]) => p.jobs_with_salary)
      expect(sizes, `${group_by}: largest samples first`).toEqual([...sizes].sort((a, b) => b - a))
      for (const [value, percentiles] of groups) {
        const spec: FilterSpec = group_by === 'country' ? { country: value } : { [group_by]: [value] }
        expectClose(percentiles, expectedPercentiles(spec).salary, `${group_by}=${value}`)
      }
    }
  })

  it('groups within a filter: grouping by the filtered field gives that one value', async () => {
    const { structured } = await callOk<BenchmarksResult>(mcp, 'get_salary_benchmarks', {
      schedule: 'standard',
      group_by: 'level',
    })
    for (const [level, percentiles] of Object.entries(structured.groups!))
      expectClose(percentiles, expectedPercentiles({ schedule: ['standard'], level: [level] }).salary, level)
    const one = await callOk<BenchmarksResult>(mcp, 'get_salary_benchmarks', {
      schedule: 'standard',
      group_by: 'schedule',
    })
    expect(Object.keys(one.structured.groups!)).toEqual(['standard'])
  })

  it('gives only the count where fewer than five salaries match, never a percentile of one employer', async () => {
    const live = fixture.oracle.live(now)
    // The narrowest real combination: one job's own category, level, schedule and office country.
    const sparse = live.find((j) => {
      const country = j.raw.office_locations?.[0]?.country
      if (!j.raw.category || !j.raw.level || !j.schedule || !country || !countryCode(country)) return false
      const matches = expectedPercentiles({
        category: [j.raw.category],
        level: [j.raw.level],
        schedule: [j.schedule],
        country,
      })
      return matches.salary.jobs_with_salary < 5
    })
    expect(sparse, 'the dataset has a sparse combination').toBeDefined()
    const args = {
      category: sparse!.raw.category!,
      level: sparse!.raw.level!,
      schedule: sparse!.schedule!,
      country: sparse!.raw.office_locations![0]!.country!,
    }
    const { structured } = await callOk<BenchmarksResult>(mcp, 'get_salary_benchmarks', args)
    expect(structured.salary).toEqual({
      jobs_with_salary: expectedPercentiles({
        ...args,
        category: [args.category],
        level: [args.level],
        schedule: [args.schedule],
      }).salary.jobs_with_salary,
    })
  })

  it('names the closest known values for an unknown category or country, and refuses values outside closed vocabularies', async () => {
    const category = await callError(mcp, 'get_salary_benchmarks', { category: 'enginering' })
    expect(category).toMatch(/category: "enginering".*"engineering"/)
    const country = await callError(mcp, 'get_salary_benchmarks', { country: 'Germny' })
    expect(country).toMatch(/"Germany"/)
    expect(await callInvalid(mcp, 'get_salary_benchmarks', { level: 'expert' })).toMatch(/level/)
    // Closed vocabularies in any letter case, as REST reads them.
    const lower = await callOk<BenchmarksResult>(mcp, 'get_salary_benchmarks', {
      level: 'senior',
      group_by: 'schedule',
    })
    const upper = await callOk<BenchmarksResult>(mcp, 'get_salary_benchmarks', {
      level: 'Senior',
      group_by: 'Schedule',
    })
    expect(upper.structured).toEqual(lower.structured)
    expect(await callInvalid(mcp, 'get_salary_benchmarks', { schedule: 'four_day' })).toMatch(/schedule/)
    expect(await callInvalid(mcp, 'get_salary_benchmarks', { group_by: 'company' })).toMatch(/group_by/)
    expect(await callInvalid(mcp, 'get_salary_benchmarks', { currency: 'EUR' })).toMatch(/unknown argument "currency"/)
  })
})
