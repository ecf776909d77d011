/**
 * GET /api/v2/jobs filters, sorting and paging (docs/api.md:
 * Parameters (v2), Country, Salary filters, Full text, Sort), each compared with a
 * brute-force oracle over the dataset files, through a real server.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../../runtime/index.ts'
import { FIXTURE_NOW, startFixtureServer } from '../support/fixtures.ts'
import { buildRestFixture, type RestFixture } from './support/fixture.ts'
import { getAllV2, getV2List, type V2Job } from './support/http.ts'
import { byDate, countryCode, salaryContractOrder, type FilterSpec, type OracleJob } from './support/oracle.ts'

const NOW = FIXTURE_NOW.getTime()
const DAY_MS = 86_400_000

let fixture: RestFixture
let server: RunningServer
let base: string
/** Every live job as v2 serves it, in default order. */
let everyJob: V2Job[]

beforeAll(async () => {
  fixture = await buildRestFixture({ jobs: 600, companies: 80, seed: 7 })
  server = await startFixtureServer(fixture.distDir, { JOBSNAP_REST_LIMIT: 100_000 })
  base = server.url
  everyJob = (await getAllV2(base, new URLSearchParams())).jobs
})

afterAll(async () => {
  await server?.close()
  await fixture?.cleanup()
})

// ------------------------------------------------------------------ helpers

/** Turns a filter spec into a query string, the plain way (comma lists). */
function toParams(spec: FilterSpec): URLSearchParams {
  const params = new URLSearchParams()
  for (const key of ['category', 'level', 'schedule', 'work_arrangement', 'skills'] as const) {
    const values = spec[key]
    if (values && values.length > 0) params.set(key, values.join(','))
  }
  for (const key of ['country', 'salary_min', 'salary_max', 'posted_after', 'sort'] as const) {
    const value = spec[key]
    if (value !== undefined) params.set(key, String(value))
  }
  return params
}

/** The served jobs equal the oracle's, in the order the contract requires. */
function expectSameResult(
  served: V2Job[],
  expected: OracleJob[],
  sort: 'date' | 'salary' | undefined,
  label: string,
): void {
  const servedIds = served.map((job) => job.id)
  expect(new Set(servedIds).size, `${label}: no job twice`).toBe(servedIds.length)
  if (sort === 'salary') {
    // A full tie (same salary, same posting time) has no order in the contract: compare sets, then check the order.
    expect([...servedIds].sort(), label).toEqual(expected.map((job) => job.raw.id).sort())
    for (let i = 1; i < served.length; i++) {
      const prev = fixture.oracle.byId.get(served[i - 1]!.id)!
      const next = fixture.oracle.byId.get(served[i]!.id)!
      expect(salaryContractOrder(prev, next), `${label}: ${prev.raw.slug} before ${next.raw.slug}`).toBeLessThanOrEqual(
        0,
      )
    }
  } else {
    expect(servedIds, label).toEqual(expected.map((job) => job.raw.id))
  }
}

async function expectQuery(query: URLSearchParams | string, spec: FilterSpec): Promise<OracleJob[]> {
  const params = new URLSearchParams(query)
  const { jobs, total } = await getAllV2(base, params)
  const expected = fixture.oracle.query(spec, NOW)
  expect(total, `total for ?${params.toString()}`).toBe(expected.length)
  expectSameResult(jobs, expected, spec.sort, `?${params.toString()}`)
  return expected
}

const distinct = <T>(values: (T | undefined)[]) => [...new Set(values.filter((v): v is T => v !== undefined))].sort()

function vocab() {
  const live = fixture.oracle.live(NOW)
  return {
    categories: distinct(live.map((j) => j.raw.category)),
    levels: distinct(live.map((j) => j.raw.level)),
    schedules: distinct(live.map((j) => j.schedule)),
    tags: distinct(live.flatMap((j) => [...j.tags])),
    countries: distinct(
      live.flatMap((j) => [...(j.raw.office_locations ?? []), ...(j.raw.remote_allowed ?? [])].map((l) => l.country)),
    ),
  }
}

const mixedCase = (value: string, style: number) =>
  style === 0
    ? value.toLowerCase()
    : style === 1
      ? value.toUpperCase()
      : [...value].map((c, i) => (i % 2 ? c.toUpperCase() : c.toLowerCase())).join('')

// ---------------------------------------------------------------- the tests

describe('the unfiltered list', () => {
  it('is every live job exactly once, newest first, ties by id', async () => {
    const live = fixture.oracle.live(NOW)
    // The dataset really has jobs that must be left out: closed ones, and ones that expired before the build.
    expect(fixture.oracle.jobs.some((j) => j.raw.status === 'closed')).toBe(true)
    expect(
      fixture.oracle.jobs.some((j) => j.raw.status === 'live' && j.expiresMs !== undefined && j.expiresMs <= NOW),
    ).toBe(true)
    expect(fixture.oracle.jobs.some((j) => j.expiresMs !== undefined && j.expiresMs > NOW)).toBe(true)
    expect(everyJob.map((j) => j.id)).toEqual(live.map((j) => j.raw.id))
  })

  it('serves each job with the dataset values the filters work on', () => {
    for (const job of everyJob) {
      const raw = fixture.oracle.byId.get(job.id)!.raw
      expect(job.slug).toBe(raw.slug)
      expect(job.category).toBe(raw.category)
      expect(job.level).toBe(raw.level)
      expect(job.work_arrangement).toBe(raw.work_arrangement)
      expect(job.is_remote).toBe(raw.work_arrangement !== 'onsite')
      expect(Date.parse(job.posted_at)).toBe(Date.parse(raw.posted_at))
      expect(job.posted_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/)
      expect(job.salary_min).toBe(raw.salary_min)
      expect(job.salary_max).toBe(raw.salary_max)
      expect(job.salary_currency).toBe(raw.salary_currency)
      expect(job.salary_period).toBe(raw.salary_period)
      expect((job.skills ?? []).map((t) => t.slug)).toEqual((raw.skills ?? []).map((t) => t.slug))
      expect(job.company?.id).toBe(raw.company_id)
    }
  })

  it('orders posting-time ties (one instant written with different offsets) by id', async () => {
    const instant = Date.parse('2026-11-19T12:00:00Z')
    const tied = fixture.oracle.live(NOW).filter((j) => j.postedMs === instant)
    expect(tied.length).toBe(4)
    const servedOrder = everyJob.filter((j) => Date.parse(j.posted_at) === instant).map((j) => j.id)
    expect(servedOrder).toEqual(tied.map((j) => j.raw.id).sort())
  })
})

describe('single filters against the oracle', () => {
  it('category: each value, an unknown value, and a comma list (ANY)', async () => {
    const { categories } = vocab()
    expect(categories.length).toBeGreaterThan(3)
    for (const category of categories) {
      const hits = await expectQuery(`category=${category}`, { category: [category] })
      expect(hits.length).toBeGreaterThan(0)
    }
    expect(await expectQuery('category=astronaut', { category: ['astronaut'] })).toHaveLength(0)
    await expectQuery(`category=${categories[0]},${categories[1]},astronaut`, {
      category: [categories[0]!, categories[1]!, 'astronaut'],
    })
  })

  it('level: each value, an unknown value, and a comma list', async () => {
    const { levels } = vocab()
    for (const level of levels)
      expect((await expectQuery(`level=${level}`, { level: [level] })).length).toBeGreaterThan(0)
    expect(await expectQuery('level=wizard', { level: ['wizard'] })).toHaveLength(0)
    await expectQuery('level=senior,lead', { level: ['senior', 'lead'] })
  })

  it('schedule: each value (4_day_week, 9_day_fortnight, ...), an unknown value, and a comma list', async () => {
    const { schedules } = vocab()
    expect(schedules).toContain('4_day_week')
    expect(schedules).toContain('9_day_fortnight')
    for (const schedule of schedules)
      expect((await expectQuery(`schedule=${schedule}`, { schedule: [schedule] })).length).toBeGreaterThan(0)
    expect(await expectQuery('schedule=6_day_week', { schedule: ['6_day_week'] })).toHaveLength(0)
    await expectQuery('schedule=4_day_week,9_day_fortnight', { schedule: ['4_day_week', '9_day_fortnight'] })
  })

  it("schedule: a job without its own schedule_type is matched by its employer's schedule", async () => {
    const inherited = fixture.oracle.live(NOW).filter((j) => j.raw.schedule_type === undefined)
    expect(inherited.length).toBe(3)
    for (const job of inherited) {
      const { jobs } = await getAllV2(base, new URLSearchParams({ schedule: job.company.schedule_type }))
      expect(jobs.map((j) => j.id)).toContain(job.raw.id)
    }
  })

  it('work_arrangement: each value, and all three together', async () => {
    for (const arrangement of ['onsite', 'hybrid', 'remote']) {
      expect(
        (await expectQuery(`work_arrangement=${arrangement}`, { work_arrangement: [arrangement] })).length,
      ).toBeGreaterThan(0)
    }
    expect(
      await expectQuery('work_arrangement=onsite,hybrid,remote', { work_arrangement: ['onsite', 'hybrid', 'remote'] }),
    ).toHaveLength(fixture.oracle.live(NOW).length)
  })

  it('skills: slugs across skills, stack and tools; unknown matches nothing', async () => {
    const { tags } = vocab()
    for (const tag of ['python', 'go', 'postgresql', 'figma', 'docker', ...tags.slice(0, 10)])
      await expectQuery(`skills=${tag}`, { skills: [tag] })
    expect(await expectQuery('skills=cobol', { skills: ['cobol'] })).toHaveLength(0)
    const both = await expectQuery('skills=python,go', { skills: ['python', 'go'] })
    expect(both.length).toBeGreaterThan(0)
  })

  it('country: names and ISO codes, any case, per office / remote country / continent / region / Worldwide', async () => {
    const { countries } = vocab()
    expect(countries.length).toBeGreaterThan(5)
    for (const country of [
      ...countries,
      'Germany',
      'DE',
      'de',
      'gErMaNy',
      'Kenya',
      'KE',
      'Brazil',
      'Japan',
      'JP',
      'Türkiye',
      'Turkey',
      'USA',
      'Colombia',
      'China',
      'Egypt',
      'Antarctica',
    ]) {
      await expectQuery(`country=${encodeURIComponent(country)}`, { country })
    }
    // Neither a continent nor an unknown name is a country: nothing matches (never a 400).
    expect(await expectQuery('country=Atlantis', { country: 'Atlantis' })).toHaveLength(0)
    expect(await expectQuery('country=Europe', { country: 'Europe' })).toHaveLength(0)
  })

  it('country: a comma list or repeated parameter matches any of the countries', async () => {
    const slugs = async (query: string) =>
      new Set((await getAllV2(base, new URLSearchParams(query))).jobs.map((j) => j.slug))
    const germany = await slugs('country=DE')
    const japan = await slugs('country=Japan')
    const union = new Set([...germany, ...japan])
    expect(union.size).toBeGreaterThan(germany.size)
    expect(await slugs('country=DE,Japan')).toEqual(union)
    expect(await slugs('country=de&country=JAPAN')).toEqual(union)
    // An unknown member of the list adds nothing and removes nothing.
    expect(await slugs('country=DE,Atlantis,Japan')).toEqual(union)
  })

  it('country: the hand-made places match exactly where docs/api.md says', async () => {
    const slugsFor = async (country: string) =>
      new Set((await getAllV2(base, new URLSearchParams({ country }))).jobs.map((j) => j.slug))
    const find = (predicate: (j: OracleJob) => boolean) => fixture.oracle.live(NOW).find(predicate)!
    const berlin = find((j) => j.raw.office_locations?.[0]?.country === 'de')
    const kenya = find((j) => j.raw.remote_allowed?.[0]?.country === 'kenya')
    const apac = find(
      (j) =>
        j.raw.remote_allowed?.length === 1 && j.raw.remote_allowed[0]!.region === 'APAC' && !j.raw.office_locations,
    )
    const ankara = find((j) => j.raw.office_locations?.[0]?.country === 'TR')

    const germany = await slugsFor('germany')
    expect(germany.has(berlin.raw.slug)).toBe(true) // office, written as a lowercase code
    expect((await slugsFor('FR')).has(berlin.raw.slug)).toBe(true) // remote within EMEA (lowercase in the data)
    expect((await slugsFor('Nigeria')).has(berlin.raw.slug)).toBe(true) // Africa is in EMEA
    expect((await slugsFor('Japan')).has(berlin.raw.slug)).toBe(false)

    expect((await slugsFor('ke')).has(kenya.raw.slug)).toBe(true) // remote country
    expect((await slugsFor('Brazil')).has(kenya.raw.slug)).toBe(true) // remote continent "south america"
    expect((await slugsFor('Uganda')).has(kenya.raw.slug)).toBe(false) // same continent as Kenya, but Kenya names a country
    expect((await slugsFor('Mexico')).has(kenya.raw.slug)).toBe(false) // North America

    expect((await slugsFor('Japan')).has(apac.raw.slug)).toBe(true)
    expect((await slugsFor('Australia')).has(apac.raw.slug)).toBe(true)
    expect((await slugsFor('Germany')).has(apac.raw.slug)).toBe(false)

    for (const name of ['TR', 'tr', 'Türkiye', 'TÜRKIYE', 'Turkey'])
      expect((await slugsFor(name)).has(ankara.raw.slug), name).toBe(true)

    // Worldwide remote jobs appear for any country, even one no office is in.
    const worldwide = fixture.oracle
      .live(NOW)
      .filter((j) => j.raw.remote_allowed?.some((l) => l.region === 'Worldwide'))
    expect(worldwide.length).toBeGreaterThan(0)
    const tuvalu = await slugsFor('Tuvalu')
    for (const job of worldwide) expect(tuvalu.has(job.raw.slug)).toBe(true)
  })

  it('office_country: an office there only, by name or code in any case, a list matching any; unknown -> nothing', async () => {
    const live = fixture.oracle.live(NOW)
    const offices = new Map<string, number>()
    for (const job of live)
      for (const office of job.raw.office_locations ?? []) {
        const code = office.country && countryCode(office.country)
        if (code) offices.set(code, (offices.get(code) ?? 0) + 1)
      }
    expect(offices.size, 'the fixture has offices in several countries').toBeGreaterThan(3)
    for (const code of offices.keys()) {
      const found = await expectQuery(`office_country=${code}`, { office_country: [code] })
      expect(found.length).toBe(
        live.filter((j) => j.raw.office_locations?.some((o) => o.country && countryCode(o.country) === code)).length,
      )
    }
    // Fewer than country, which also counts jobs remote from there.
    const germanyOffice = await expectQuery('office_country=germany', { office_country: ['germany'] })
    const germanyAny = await expectQuery('country=Germany', { country: 'Germany' })
    expect(germanyOffice.length).toBeGreaterThan(0)
    expect(germanyOffice.length).toBeLessThan(germanyAny.length)
    for (const job of germanyOffice)
      expect(job.raw.office_locations?.some((o) => o.country && countryCode(o.country) === 'DE')).toBe(true)
    const [first, second] = [...offices.keys()]
    await expectQuery(`office_country=${first},${second!.toLowerCase()}`, { office_country: [first!, second!] })
    await expectQuery(`office_country=${first}&office_country=${second}`, { office_country: [first!, second!] })
    await expectQuery(`office_country=${first},Atlantis`, { office_country: [first!, 'Atlantis'] })
    expect(await expectQuery('office_country=Atlantis', { office_country: ['Atlantis'] })).toHaveLength(0)
    expect(await expectQuery('office_country=Europe', { office_country: ['Europe'] })).toHaveLength(0)
    // The other spellings country takes: accents, own names.
    const turkey = await expectQuery('office_country=TR', { office_country: ['TR'] })
    expect(turkey.length).toBeGreaterThan(0)
    for (const name of ['Türkiye', 'turkiye', 'Turkey'])
      expect((await getAllV2(base, new URLSearchParams({ office_country: name }))).total, name).toBe(turkey.length)
    expect((await getAllV2(base, new URLSearchParams({ office_country: 'Deutschland' }))).total).toBe(
      germanyOffice.length,
    )
    // Combined with country (AND), and not named as an ignored parameter.
    await expectQuery('office_country=DE&country=FR', { office_country: ['DE'], country: 'FR' })
    const response = await fetch(`${base}/api/v2/jobs?office_country=DE`)
    expect(response.headers.get('x-ignored-parameters')).toBeNull()
  })

  it('salary_min / salary_max: annualised whole USD, inclusive bounds, no-salary jobs left out', async () => {
    const withSalary = fixture.oracle.live(NOW).filter((j) => j.salary !== undefined)
    const without = fixture.oracle.live(NOW).filter((j) => j.salary === undefined)
    expect(without.length).toBeGreaterThan(0)
    // Any salary filter, even 0, leaves out jobs without a salary.
    expect(await expectQuery('salary_min=0', { salary_min: 0 })).toHaveLength(withSalary.length)
    expect(await expectQuery('salary_max=100000000', { salary_max: 100_000_000 })).toHaveLength(withSalary.length)
    for (const amount of [1, 30_000, 50_000, 75_600, 83_200, 104_000, 150_000, 250_000, 10_000_000]) {
      await expectQuery(`salary_min=${amount}`, { salary_min: amount })
      await expectQuery(`salary_max=${amount}`, { salary_max: amount })
    }
    await expectQuery('salary_min=60000&salary_max=90000', { salary_min: 60_000, salary_max: 90_000 })
    await expectQuery('salary_min=83200&salary_max=83200', { salary_min: 83_200, salary_max: 83_200 })
  })

  it('salary: the hand-made records convert as docs/api.md says (hour x hours x 52, month x 12, currency rates)', async () => {
    const ids = async (query: string) =>
      new Set((await getAllV2(base, new URLSearchParams(query))).jobs.map((j) => j.slug))
    const find = (predicate: (j: OracleJob) => boolean) => fixture.oracle.live(NOW).find(predicate)!
    const hourly40 = find(
      (j) => j.raw.salary_period === 'hour' && j.raw.salary_min === 5000 && j.raw.hours_per_week_max === undefined,
    )
    const hourly32 = find(
      (j) => j.raw.salary_period === 'hour' && j.raw.salary_min === 5000 && j.raw.hours_per_week_max === 32,
    )
    const yen = find(
      (j) => j.raw.salary_currency === 'JPY' && j.raw.salary_max === 500_000 && j.raw.salary_period === 'month',
    )
    const euroTop = find(
      (j) => j.raw.salary_currency === 'EUR' && j.raw.salary_max === 7_000_000 && j.raw.salary_min === undefined,
    )
    // 50 USD/h x 40 h (unknown hours) x 52 = 104,000
    expect((await ids('salary_min=104000')).has(hourly40.raw.slug)).toBe(true)
    expect((await ids('salary_min=104001')).has(hourly40.raw.slug)).toBe(false)
    expect((await ids('salary_max=104000')).has(hourly40.raw.slug)).toBe(true)
    expect((await ids('salary_max=103999')).has(hourly40.raw.slug)).toBe(false)
    // 50 USD/h x 32 h x 52 = 83,200
    expect((await ids('salary_min=83200&salary_max=83200')).has(hourly32.raw.slug)).toBe(true)
    expect((await ids('salary_min=83201')).has(hourly32.raw.slug)).toBe(false)
    // 500,000 JPY a month (no minor unit) x 0.0067 x 12 = 40,200
    expect((await ids('salary_min=40200&salary_max=40200')).has(yen.raw.slug)).toBe(true)
    expect((await ids('salary_min=40201')).has(yen.raw.slug)).toBe(false)
    // Only a top of 70,000 EUR x 1.08 = 75,600: both filters use it.
    expect((await ids('salary_min=75600&salary_max=75600')).has(euroTop.raw.slug)).toBe(true)
    expect((await ids('salary_max=75599')).has(euroTop.raw.slug)).toBe(false)
  })

  it('posted_after: N days back from now, inclusive; 0 no restriction; above 365 capped', async () => {
    for (const days of [1, 2, 3, 7, 30, 90, 365]) {
      const hits = await expectQuery(`posted_after=${days}`, { posted_after: days })
      expect(hits.every((j) => j.postedMs >= NOW - days * DAY_MS)).toBe(true)
    }
    const all = fixture.oracle.live(NOW).length
    expect(await expectQuery('posted_after=0', { posted_after: 0 })).toHaveLength(all)
    const capped = (await getV2List(base, 'posted_after=365')).body.total
    expect((await getV2List(base, 'posted_after=366')).body.total).toBe(capped)
    expect((await getV2List(base, 'posted_after=100000')).body.total).toBe(capped)
    // The tied jobs were posted exactly 3 days before now: in at 3, out at 2.
    const tiedSlugs = fixture.oracle
      .live(NOW)
      .filter((j) => j.postedMs === NOW - 3 * DAY_MS)
      .map((j) => j.raw.slug)
    expect(tiedSlugs).toHaveLength(4)
    const in3 = new Set((await getAllV2(base, new URLSearchParams('posted_after=3'))).jobs.map((j) => j.slug))
    const in2 = new Set((await getAllV2(base, new URLSearchParams('posted_after=2'))).jobs.map((j) => j.slug))
    for (const slug of tiedSlugs) {
      expect(in3.has(slug)).toBe(true)
      expect(in2.has(slug)).toBe(false)
    }
  })
})

describe('sorting', () => {
  it('sort=date is the default and equals no sort', async () => {
    const a = await getV2List(base, 'limit=100')
    const b = await getV2List(base, 'limit=100&sort=date')
    const c = await getV2List(base, 'limit=100&sort=DATE')
    expect(b.text).toBe(a.text)
    expect(c.text).toBe(a.text)
  })

  it('sort=salary: highest annualised USD first, no salary last, ties newest first', async () => {
    const { jobs } = await getAllV2(base, new URLSearchParams('sort=salary'))
    const expected = fixture.oracle.query({ sort: 'salary' }, NOW)
    expectSameResult(jobs, expected, 'salary', 'sort=salary')
    // The no-salary jobs form the tail, newest first.
    const firstWithout = jobs.findIndex((j) => fixture.oracle.byId.get(j.id)!.salary === undefined)
    expect(firstWithout).toBeGreaterThan(0)
    expect(jobs.slice(firstWithout).every((j) => fixture.oracle.byId.get(j.id)!.salary === undefined)).toBe(true)
    // Equal salaries: newest first.
    const same = jobs.filter(
      (j) => j.salary_currency === 'USD' && j.salary_period === 'year' && j.salary_max === 12_345_600,
    )
    expect(same.length).toBe(6)
    const posted = same.map((j) => Date.parse(j.posted_at))
    expect(posted).toEqual([...posted].sort((x, y) => y - x))
    // sort=salary is a different order from date, or this test proves nothing.
    expect(jobs.map((j) => j.id)).not.toEqual(everyJob.map((j) => j.id))
  })

  it('sort is case-insensitive and combines with filters', async () => {
    await expectQuery('sort=Salary&category=engineering', { sort: 'salary', category: ['engineering'] })
    await expectQuery('sort=SALARY&salary_min=100000', { sort: 'salary', salary_min: 100_000 })
  })
})

describe('paging', () => {
  it('is stable: every page size visits every job exactly once, in the same order', async () => {
    for (const [query, limit] of [
      ['', 7],
      ['sort=salary', 13],
      ['category=engineering', 3],
      ['sort=salary&work_arrangement=remote', 100],
    ] as const) {
      const full = await getAllV2(base, new URLSearchParams(query), 100)
      const paged = await getAllV2(base, new URLSearchParams(query), limit)
      expect(paged.total).toBe(full.total)
      expect(paged.jobs.map((j) => j.id)).toEqual(full.jobs.map((j) => j.id))
    }
  })

  it('random page/limit windows equal the oracle slice (property)', async () => {
    const { categories } = vocab()
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          page: fc.integer({ min: 1, max: 30 }),
          limit: fc.integer({ min: 1, max: 100 }),
          sort: fc.constantFrom(undefined, 'date' as const, 'salary' as const),
          category: fc.option(fc.subarray(categories, { minLength: 1, maxLength: 3 }), { nil: undefined }),
        }),
        async ({ page, limit, sort, category }) => {
          const spec: FilterSpec = { sort, category }
          const params = toParams(spec)
          params.set('page', String(page))
          params.set('limit', String(limit))
          const { body } = await getV2List(base, params)
          const expected = fixture.oracle.query(spec, NOW)
          expect(body.page).toBe(page)
          expect(body.limit).toBe(limit)
          expect(body.total).toBe(expected.length)
          expect(body.has_more).toBe(page * limit < expected.length)
          const window = expected.slice((page - 1) * limit, page * limit)
          if (sort === 'salary') {
            expect(body.data.map((j) => fixture.oracle.byId.get(j.id)!.salary?.high)).toEqual(
              window.map((j) => j.salary?.high),
            )
          } else {
            expect(body.data.map((j) => j.id)).toEqual(window.map((j) => j.raw.id))
          }
        },
      ),
      { numRuns: 150, seed: 20261122 },
    )
  })
})

describe('parameter syntax (docs/api.md: Parameters (v2))', () => {
  it('a repeated parameter is the same as a comma list', async () => {
    const pairs: [string, string][] = [
      ['level=senior&level=lead', 'level=senior,lead'],
      ['category=engineering&category=data&category=design', 'category=engineering,data,design'],
      ['schedule=4_day_week&schedule=9_day_fortnight', 'schedule=4_day_week,9_day_fortnight'],
      ['work_arrangement=remote&work_arrangement=hybrid', 'work_arrangement=remote,hybrid'],
      ['skills=python&skills=go&limit=100', 'skills=python,go&limit=100'],
      ['level=senior,lead&level=mid', 'level=senior,lead,mid'],
    ]
    for (const [repeated, comma] of pairs) {
      const a = await getV2List(base, repeated)
      const b = await getV2List(base, comma)
      expect(a.body.total, repeated).toBeGreaterThan(0)
      expect(a.text, repeated).toBe(b.text)
    }
  })

  it('unknown parameters are ignored', async () => {
    const plain = await getV2List(base, 'category=engineering&limit=50')
    const noisy = await getV2List(
      base,
      'utm_source=newsletter&category=engineering&foo=bar&limit=50&callback=x&fields=id&Category=sales',
    )
    expect(noisy.text).toBe(plain.text)
  })

  it('an empty parameter is no filter', async () => {
    const plain = await getV2List(base, '')
    const empty = await getV2List(
      base,
      'category=&level=&schedule=&work_arrangement=&skills=&country=&salary_min=&salary_max=&posted_after=&q=&sort=&page=&limit=',
    )
    expect(empty.text).toBe(plain.text)
    expect(empty.body.total).toBe(fixture.oracle.live(NOW).length)
    const commas = await getV2List(base, 'category=,&level=,,')
    expect(commas.body.total).toBe(fixture.oracle.live(NOW).length)
  })

  it('matching is case-insensitive for every list parameter and country', async () => {
    const pairs: [string, string][] = [
      ['category=ENGINEERING', 'category=engineering'],
      ['level=Senior', 'level=senior'],
      ['schedule=4_DAY_WEEK', 'schedule=4_day_week'],
      ['work_arrangement=Remote', 'work_arrangement=remote'],
      ['skills=PyThOn', 'skills=python'],
      ['country=GERMANY', 'country=germany'],
      ['country=De', 'country=Germany'],
    ]
    for (const [upper, lower] of pairs) {
      const a = await getV2List(base, `${upper}&limit=100`)
      const b = await getV2List(base, `${lower}&limit=100`)
      expect(a.body.total, upper).toBeGreaterThan(0)
      expect(
        a.body.data.map((j) => j.id),
        upper,
      ).toEqual(b.body.data.map((j) => j.id))
    }
  })

  it('different parameters combine with AND, values of one parameter with ANY', async () => {
    const spec: FilterSpec = {
      category: ['engineering', 'data'],
      level: ['senior', 'lead'],
      work_arrangement: ['remote'],
    }
    const hits = await expectQuery(toParams(spec), spec)
    expect(hits.length).toBeGreaterThan(0)
    for (const job of hits) {
      expect(['engineering', 'data']).toContain(job.raw.category)
      expect(['senior', 'lead']).toContain(job.raw.level)
      expect(job.raw.work_arrangement).toBe('remote')
    }
  })
})

describe('random filter combinations against the oracle (property)', () => {
  it('every combination returns exactly the matching jobs in contract order', async () => {
    const { categories, levels, schedules, tags } = vocab()
    const countryPool = [
      'DE',
      'GB',
      'US',
      'FR',
      'NL',
      'JP',
      'IN',
      'BR',
      'AU',
      'CA',
      'KE',
      'TR',
      'CO',
      'CN',
      'MX',
      'ZA',
      'SE',
      'PL',
      'NZ',
      'SG',
    ]
    const countryNames: Record<string, string[]> = {
      DE: ['Germany'],
      GB: ['United Kingdom', 'UK'],
      US: ['United States', 'USA'],
      FR: ['France'],
      NL: ['Netherlands', 'Holland'],
      JP: ['Japan'],
      IN: ['India'],
      BR: ['Brazil'],
      AU: ['Australia'],
      CA: ['Canada'],
      KE: ['Kenya'],
      TR: ['Türkiye', 'Turkey'],
      CO: ['Colombia'],
      CN: ['China'],
      MX: ['Mexico'],
      ZA: ['South Africa'],
      SE: ['Sweden'],
      PL: ['Poland'],
      NZ: ['New Zealand'],
      SG: ['Singapore'],
    }
    const salaryPoints = fixture.oracle
      .live(NOW)
      .flatMap((j) => (j.salary ? [Math.floor(j.salary.low), Math.ceil(j.salary.high), Math.round(j.salary.high)] : []))
    const listOf = (pool: string[], extra: string) =>
      fc.option(fc.subarray([...pool, extra], { minLength: 1, maxLength: 3 }), { nil: undefined, freq: 2 })
    const salary = fc.option(fc.oneof(fc.constantFrom(...salaryPoints), fc.integer({ min: 0, max: 300_000 })), {
      nil: undefined,
      freq: 2,
    })

    const specArb = fc.record({
      category: listOf(categories, 'astronaut'),
      level: listOf(levels, 'wizard'),
      schedule: listOf(schedules, 'six_day_week'),
      work_arrangement: fc.option(fc.subarray(['onsite', 'hybrid', 'remote'], { minLength: 1 }), {
        nil: undefined,
        freq: 2,
      }),
      skills: listOf(tags, 'cobol'),
      country: fc.option(
        fc.oneof(
          fc.constantFrom(...countryPool),
          fc.constantFrom(...countryPool).chain((code) => fc.constantFrom(...countryNames[code]!)),
          fc.constant('Atlantis'),
        ),
        { nil: undefined, freq: 2 },
      ),
      salary_min: salary,
      salary_max: salary,
      posted_after: fc.option(fc.integer({ min: 0, max: 400 }), { nil: undefined, freq: 3 }),
      sort: fc.constantFrom(undefined, 'date' as const, 'salary' as const),
    })
    const formArb = fc.record({
      repeated: fc.boolean(),
      caseStyle: fc.integer({ min: 0, max: 2 }),
      noise: fc.boolean(),
      empties: fc.boolean(),
    })

    let nonEmpty = 0
    let runs = 0
    await fc.assert(
      fc.asyncProperty(specArb, formArb, async (rawSpec, form) => {
        const spec: FilterSpec = { ...rawSpec }
        if (spec.salary_min !== undefined && spec.salary_max !== undefined && spec.salary_min > spec.salary_max) {
          ;[spec.salary_min, spec.salary_max] = [spec.salary_max, spec.salary_min]
        }
        const params = new URLSearchParams()
        if (form.noise) params.append('utm_campaign', 'spring')
        for (const key of ['category', 'level', 'schedule', 'work_arrangement', 'skills'] as const) {
          const values = spec[key]?.map((v) => mixedCase(v, form.caseStyle))
          if (!values) {
            if (form.empties) params.append(key, '')
            continue
          }
          if (form.repeated) for (const value of values) params.append(key, value)
          else params.append(key, values.join(','))
        }
        if (spec.country !== undefined) params.append('country', mixedCase(spec.country, form.caseStyle))
        for (const key of ['salary_min', 'salary_max', 'posted_after'] as const) {
          const value = spec[key]
          if (value !== undefined) params.append(key, String(value))
          else if (form.empties) params.append(key, '')
        }
        if (spec.sort !== undefined) params.append('sort', form.caseStyle === 1 ? spec.sort.toUpperCase() : spec.sort)
        if (form.noise) params.append('x', 'y')

        const { jobs, total } = await getAllV2(base, params)
        const expected = fixture.oracle.query(spec, NOW)
        expect(total, `?${params.toString()}`).toBe(expected.length)
        expectSameResult(jobs, expected, spec.sort, `?${params.toString()}`)
        runs++
        if (expected.length > 0) nonEmpty++
      }),
      { numRuns: 200, seed: 42 },
    )
    // The property is not vacuous: a fair share of combinations matched something.
    expect(nonEmpty).toBeGreaterThan(runs / 5)
  })
})

// ------------------------------------------------------------------- q

/** MiniSearch's default tokenizer: split on spaces and punctuation, lowercase. */
const words = (text: string) =>
  text
    .toLowerCase()
    .split(/[\n\r\p{Z}\p{P}]+/u)
    .filter((w) => w !== '')

function searchableWords(job: V2Job): string[] {
  const places = [...(job.office_locations ?? []), ...(job.remote_allowed ?? [])].flatMap((l) => [
    l.city,
    l.state,
    l.country,
    l.continent,
    l.region,
  ])
  const tags = [...(job.skills ?? []), ...(job.stack ?? []), ...(job.tools ?? [])].map((t) => t.name)
  return words(
    [job.title, job.role, job.company?.name, ...tags, ...places, job.description]
      .filter((v): v is string => typeof v === 'string')
      .join(' '),
  )
}

function editDistanceAtMostOne(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) return false
  let i = 0
  let j = 0
  let edits = 0
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      i++
      j++
      continue
    }
    if (++edits > 1) return false
    if (a.length > b.length) i++
    else if (a.length < b.length) j++
    else {
      i++
      j++
    }
  }
  return edits + (a.length - i) + (b.length - j) <= 1
}

/** Loose soundness: the term is a prefix of some word; terms of 5+ may be one edit off a word or a prefix of one. */
function termLooselyMatches(term: string, jobWords: string[]): boolean {
  if (term.length < 3) return jobWords.includes(term)
  return jobWords.some((w) => {
    if (w.startsWith(term)) return true
    if (term.length < 5) return false
    for (let len = term.length - 1; len <= term.length + 1; len++)
      if (len <= w.length && editDistanceAtMostOne(term, w.slice(0, len))) return true
    return false
  })
}

/** Strict completeness: a job whose words start with every term (exact for short terms) must be found. */
function termSurelyMatches(term: string, jobWords: string[]): boolean {
  return term.length < 3 ? jobWords.includes(term) : jobWords.some((w) => w.startsWith(term))
}

async function checkQ(q: string, extra = ''): Promise<V2Job[]> {
  const params = new URLSearchParams(extra)
  params.set('q', q)
  const { jobs, total } = await getAllV2(base, params)
  const terms = words(q)
  for (const job of jobs) {
    const jobWords = searchableWords(job)
    for (const term of terms) expect(termLooselyMatches(term, jobWords), `q=${q}: ${job.slug} lacks ${term}`).toBe(true)
  }
  const pool = extra ? (await getAllV2(base, new URLSearchParams(extra))).jobs : everyJob
  const found = new Set(jobs.map((j) => j.id))
  for (const job of pool) {
    const jobWords = searchableWords(job)
    if (terms.every((term) => termSurelyMatches(term, jobWords)))
      expect(found.has(job.id), `q=${q}: ${job.slug} was missed`).toBe(true)
  }
  expect(total).toBe(jobs.length)
  return jobs
}

describe('q (full text)', () => {
  it('finds jobs by title, role, company, tag, place and description words; every term must match', async () => {
    const sample = everyJob[17]!
    const queries = [
      'engineer',
      'senior engineer',
      'Senior ENGINEER',
      'designer',
      'python',
      'PostgreSQL',
      'Berlin',
      'Worldwide',
      'Europe',
      sample.company!.name,
      `${sample.title} ${sample.company!.name}`,
      'manag',
      'schedule',
      'hiring',
      'zzzzqqq',
    ]
    for (const q of queries) {
      const hits = await checkQ(q)
      if (q !== 'zzzzqqq') expect(hits.length, q).toBeGreaterThan(0)
      else expect(hits).toHaveLength(0)
    }
  })

  it('filters only: the order is still sort, and other filters still apply', async () => {
    const bySalary = await checkQ('engineer', 'sort=salary')
    for (let i = 1; i < bySalary.length; i++) {
      const prev = fixture.oracle.byId.get(bySalary[i - 1]!.id)!
      const next = fixture.oracle.byId.get(bySalary[i]!.id)!
      expect(salaryContractOrder(prev, next)).toBeLessThanOrEqual(0)
    }
    const byDateHits = await checkQ('engineer')
    const oracleJobs = byDateHits.map((j) => fixture.oracle.byId.get(j.id)!)
    expect(oracleJobs).toEqual([...oracleJobs].sort(byDate))
    const filtered = await checkQ('engineer', 'work_arrangement=remote&level=senior')
    expect(filtered.length).toBeGreaterThan(0)
    for (const job of filtered) {
      expect(job.work_arrangement).toBe('remote')
      expect(job.level).toBe('senior')
    }
  })

  it('random words taken from served jobs find those jobs (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat(everyJob.length - 1),
        fc.integer({ min: 1, max: 2 }),
        fc.nat(),
        fc.boolean(),
        async (index, count, offset, upper) => {
          const job = everyJob[index]!
          const jobWords = searchableWords(job).filter((w) => w.length >= 3 && /^\p{L}+$/u.test(w))
          const picked = Array.from({ length: count }, (_, i) => jobWords[(offset + i * 7) % jobWords.length]!)
          const q = upper ? picked.join(' ').toUpperCase() : picked.join(' ')
          const hits = await checkQ(q)
          expect(hits.map((j) => j.id)).toContain(job.id)
        },
      ),
      { numRuns: 40, seed: 7 },
    )
  })
})
