/**
 * The MCP tools (docs/agents.md) through the SDK's own Client and
 * StreamableHTTPClientTransport against a real server on loopback. Oracles:
 * the v2 REST list and single-job endpoints of the same server, and the
 * dataset files the fixture was built from. Every successful call goes
 * through `callOk`, which requires a non-empty text content and a
 * structuredContent the Client validated against the listed outputSchema.
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type CountryCode,
  countryContinent,
  type DatasetCompany,
  type DatasetJob,
  regionsOfCountry,
  resolveCountry,
} from '../../core/index.ts'
import type { RunningServer } from '../../runtime/index.ts'
import { buildFixture, FIXTURE_NOW, startFixtureServer, type FixtureSnapshot } from '../support/fixtures.ts'
import {
  allV2Jobs,
  callError,
  callInvalid,
  callOk,
  callUnknownTool,
  connectMcp,
  getV2Job,
  readDataset,
  TOOL_NAMES,
  type McpSession,
  type V2Job,
} from './support/mcp.ts'

// ---------- the result shapes these tests read ----------

const SCHEDULES = [
  '4_day_week',
  '9_day_fortnight',
  '4_5_day_week',
  'reduced_hours',
  'compressed_hours',
  'part_time',
  'standard',
] as const

interface ScheduleFacts {
  type: string
  label: string
  reduces_hours: boolean
  full_pay: boolean
  is_four_day_week: boolean
}
interface JobSummary {
  slug: string
  title: string
  company: string
  company_slug: string
  schedule?: string
  is_four_day_week?: boolean
  work_arrangement: string
  locations: string
  salary?: string
  posted_at: string
  url: string
}
interface SearchJobsResult {
  total: number
  page: number
  has_more: boolean
  jobs: JobSummary[]
  hint?: string
}
interface GetJobResult {
  job: V2Job
  salary?: string
  salary_usd_annual?: { min?: number; max?: number }
  schedule?: string
  is_four_day_week?: boolean
  weekly_hours?: string
  locations: string
  company_summary?: string
}
interface CompanySummary {
  slug: string
  name: string
  schedule: string
  is_four_day_week: boolean
  hours_full_time?: number
  remote_level: string
  hires_worldwide: boolean
  country?: string
  work_life_score?: number
  live_jobs: number
}
interface SearchCompaniesResult {
  total: number
  page: number
  has_more: boolean
  companies: CompanySummary[]
}
interface GetCompanyResult {
  slug: string
  name: string
  url: string
  country?: string
  employees?: number
  schedule: ScheduleFacts & { definition: string; policy_text?: string }
  hours_full_time?: number
  remote_level: string
  office_policy: string
  hires_worldwide: boolean
  benefits: string[]
  work_life_score?: number
  day_off?: string
  vacation_days?: number
  awards?: string[]
  live_jobs: number
}
interface MarketStatsResult {
  as_of: string
  employers_tracked: number
  live_jobs: number
  employers_by_schedule: { schedule_type: string; employers: number; share: number }[]
  true_four_day_week_employer_share: number
  median_full_time_weekly_hours?: number
  remote_share_of_jobs: { remote: number; hybrid: number; onsite: number }
  caveats: string[]
  bulk_exports: {
    index_url: string
    snapshot_id: string
    files: { name: string; url: string; bytes: number; rows: number; sha256: string }[]
    how_to_mirror: string
  }
}
interface ExplainResult {
  schedule_types: (ScheduleFacts & { definition: string; typical_weekly_hours: number })[]
  note: string
}

const PAGE_SIZE = 25
const MAX_PAGE = 200
/** Words that would present a schedule as a four-day week. */
const FOUR_DAY_WORDING = /4[- ]day[- ]week|four[- ]day[- ]week/i

const round3 = (value: number) => Math.round(value * 1000) / 1000

function median(values: number[]): number | undefined {
  if (values.length === 0) return undefined
  const sorted = [...values].sort((a, b) => a - b)
  const mid = (sorted.length - 1) / 2
  return (sorted[Math.floor(mid)]! + sorted[Math.ceil(mid)]!) / 2
}

// ---------- shared fixture: one dataset, one server, one client ----------

let fixture: FixtureSnapshot
let server: RunningServer
let mcp: McpSession
let companies: DatasetCompany[]
let rawJobs: DatasetJob[]
/** Every live job, as GET /api/v2/jobs lists them (newest first). */
let allJobs: V2Job[]

beforeAll(async () => {
  fixture = await buildFixture({ jobs: 600, companies: 80, seed: 7 })
  // Rate limits are the subject of rate-limit.test.ts; here they would only get in the way.
  server = await startFixtureServer(fixture.distDir, { JOBSNAP_REST_LIMIT: 100_000, JOBSNAP_MCP_BURST: 100_000 })
  mcp = await connectMcp(server.url)
  ;({ companies, jobs: rawJobs } = await readDataset(fixture.dataDir))
  allJobs = (await allV2Jobs(server.url)).jobs
})

afterAll(async () => {
  await mcp?.close()
  await server?.close()
  await fixture?.cleanup()
})

/** Pages search_jobs from page 1 until has_more is false, checking every page's wrapper. */
async function allSearchJobs(
  args: Record<string, unknown>,
): Promise<{ total: number; jobs: JobSummary[]; pages: number; texts: string[] }> {
  const jobs: JobSummary[] = []
  const texts: string[] = []
  let total: number | undefined
  for (let page = 1; page <= MAX_PAGE; page++) {
    const { structured, text } = await callOk<SearchJobsResult>(mcp, 'search_jobs', { ...args, page })
    total ??= structured.total
    expect(structured.page).toBe(page)
    expect(structured.total, 'total is the same on every page').toBe(total)
    expect(structured.jobs.length).toBeLessThanOrEqual(PAGE_SIZE)
    expect(structured.has_more).toBe(page * PAGE_SIZE < structured.total)
    if (structured.has_more) expect(structured.jobs.length, 'a page before the last is full').toBe(PAGE_SIZE)
    jobs.push(...structured.jobs)
    texts.push(text)
    if (!structured.has_more) return { total: total, jobs, pages: page, texts }
  }
  throw new Error(`search_jobs ${JSON.stringify(args)} still had more after page ${MAX_PAGE}`)
}

async function allSearchCompanies(
  args: Record<string, unknown>,
): Promise<{ total: number; companies: CompanySummary[] }> {
  const found: CompanySummary[] = []
  for (let page = 1; page <= MAX_PAGE; page++) {
    const { structured } = await callOk<SearchCompaniesResult>(mcp, 'search_companies', { ...args, page })
    expect(structured.page).toBe(page)
    expect(structured.companies.length).toBeLessThanOrEqual(PAGE_SIZE)
    expect(structured.has_more).toBe(page * PAGE_SIZE < structured.total)
    found.push(...structured.companies)
    if (!structured.has_more) {
      expect(found).toHaveLength(structured.total)
      return { total: structured.total, companies: found }
    }
  }
  throw new Error('runaway paging')
}

const companyBySlug = () => new Map(companies.map((c) => [c.slug, c]))

describe('tools/list', () => {
  it('lists exactly the eight tools, each read-only, with input and output schemas', () => {
    expect([...mcp.tools.keys()].sort()).toEqual([...TOOL_NAMES].sort())
    for (const tool of mcp.tools.values()) {
      expect(tool.annotations?.readOnlyHint, tool.name).toBe(true)
      expect(tool.annotations?.destructiveHint ?? false, tool.name).toBe(false)
      expect(tool.description?.length, tool.name).toBeGreaterThan(20)
      expect(tool.inputSchema.type).toBe('object')
      expect(tool.outputSchema?.type, `${tool.name} publishes an outputSchema`).toBe('object')
    }
  })

  it('lists every schedule type as the closed vocabulary it is, and keeps compressed hours apart from the four-day week', async () => {
    for (const name of ['search_jobs', 'search_companies'] as const) {
      const schedule = (mcp.tools.get(name)!.inputSchema.properties as Record<string, { items?: { enum?: string[] } }>)
        .schedule
      expect(schedule?.items?.enum, `${name} lists the schedule types`).toEqual([...SCHEDULES])
    }
    // The description carries the taxonomy: every value with its typical weekly hours, which are not at full pay,
    // and that compressed hours are never a four-day week.
    const description = mcp.tools.get('search_jobs')!.description!
    const explained = (await callOk<ExplainResult>(mcp, 'explain_schedule_type', {})).structured.schedule_types
    for (const type of explained) expect(description, type.type).toContain(`${type.type} ${type.typical_weekly_hours}`)
    expect(description).toContain(
      `all full pay but ${explained
        .filter((type) => !type.full_pay)
        .map((type) => type.type)
        .join(', ')}`,
    )
    expect(description).toMatch(/compressed_hours[^.]*never is/i)
  })

  it('documents the paging bounds in the search tools input schemas', () => {
    for (const name of ['search_jobs', 'search_companies']) {
      const page = (
        mcp.tools.get(name)!.inputSchema.properties as Record<string, { minimum?: number; maximum?: number }>
      ).page
      expect(page, name).toMatchObject({ minimum: 1, maximum: MAX_PAGE })
    }
  })

  it('arms the Client output validation with a real schema per tool (a tampered result fails it)', async () => {
    for (const name of TOOL_NAMES) {
      const schema = mcp.tools.get(name)!.outputSchema!
      expect(mcp.validator.compiled.has(schema), `the Client compiled ${name}'s outputSchema`).toBe(true)
    }
    const { structured } = await callOk<SearchJobsResult>(mcp, 'search_jobs', {})
    const validate = mcp.validator.compiled.get(mcp.tools.get('search_jobs')!.outputSchema!)!
    expect(validate(structured).valid).toBe(true)
    const { total: _total, ...withoutTotal } = structured
    expect(validate(withoutTotal).valid, 'a result without total is rejected').toBe(false)
    expect(validate({ ...structured, has_more: 'yes' }).valid, 'a non-boolean has_more is rejected').toBe(false)
    const explain = mcp.validator.compiled.get(mcp.tools.get('explain_schedule_type')!.outputSchema!)!
    expect(explain({ schedule_types: [{ type: 'compressed_hours' }], note: 'x' }).valid).toBe(false)
  })
})

describe('search_jobs', () => {
  /** MCP arguments and the v2 list query that means the same. */
  const cases: { name: string; args: Record<string, unknown>; rest: Record<string, string> }[] = [
    { name: 'no filter (every live job, newest first, over many pages)', args: {}, rest: {} },
    {
      name: 'true four-day weeks, remote or hybrid',
      args: { schedule: ['4_day_week'], work_arrangement: ['remote', 'hybrid'] },
      rest: { schedule: '4_day_week', work_arrangement: 'remote,hybrid' },
    },
    {
      name: 'engineering or data, senior or lead, by salary',
      args: { category: ['engineering', 'Data'], level: ['senior', 'lead'], sort: 'salary' },
      rest: { category: 'engineering,data', level: 'senior,lead', sort: 'salary' },
    },
    { name: 'country by name', args: { country: 'Germany' }, rest: { country: 'Germany' } },
    {
      name: 'country by ISO code, compressed or standard hours',
      args: { country: 'us', schedule: ['compressed_hours', 'standard'] },
      rest: { country: 'US', schedule: 'compressed_hours,standard' },
    },
    {
      name: 'skills, posted in the last 30 days',
      args: { skills: ['python', 'sql', 'react'], posted_within_days: 30 },
      rest: { skills: 'python,sql,react', posted_after: '30' },
    },
    { name: 'full text', args: { query: 'engineer' }, rest: { q: 'engineer' } },
    {
      name: 'full text with a filter, by salary',
      args: { query: 'senior', work_arrangement: ['remote'], sort: 'salary' },
      rest: { q: 'senior', work_arrangement: 'remote', sort: 'salary' },
    },
  ]

  it.each(cases)(
    'pages until has_more is false and lists what GET /api/v2/jobs lists: $name',
    async ({ args, rest }) => {
      const mcpAll = await allSearchJobs(args)
      const restAll = await allV2Jobs(server.url, rest)
      expect(restAll.total, 'the filter is not vacuous').toBeGreaterThan(0)
      expect(mcpAll.total).toBe(restAll.total)
      expect(
        mcpAll.jobs.map((j) => j.slug),
        'same jobs in the same order',
      ).toEqual(restAll.jobs.map((j) => j.slug))
      expect(new Set(mcpAll.jobs.map((j) => j.slug)).size, 'no job on two pages').toBe(mcpAll.jobs.length)
      expect(mcpAll.pages).toBe(Math.max(1, Math.ceil(restAll.total / PAGE_SIZE)))
      // Each summary says what the v2 item says.
      mcpAll.jobs.forEach((summary, i) => {
        const job = restAll.jobs[i]!
        expect(summary).toMatchObject({
          title: job.title,
          url: job.url,
          posted_at: job.posted_at,
          work_arrangement: job.work_arrangement,
        })
        expect(summary.company).toBe(job.company?.name ?? '')
        expect(summary.company_slug).toBe(job.company?.slug ?? '')
        expect(summary.schedule).toBe(job.schedule_type)
        expect(summary.salary !== undefined, `${job.slug}: a salary only when published`).toBe(
          job.salary_min !== undefined || job.salary_max !== undefined,
        )
      })
    },
  )

  it('filters by employer work-life score like the v2 list filtered by company', async () => {
    const threshold = 75
    const expected = allJobs.filter((job) => (job.company?.work_life_score ?? -1) >= threshold).map((j) => j.slug)
    expect(expected.length).toBeGreaterThan(PAGE_SIZE)
    expect(expected.length).toBeLessThan(allJobs.length)
    const { jobs } = await allSearchJobs({ min_work_life_score: threshold })
    expect(jobs.map((j) => j.slug)).toEqual(expected)
  })

  it('returns at most 25 per call even when asked for more, and accepts page 200', async () => {
    // A page size is not the caller's to choose: asking for one is an unknown argument.
    expect(await callInvalid(mcp, 'search_jobs', { limit: 100, per_page: 100 })).toMatch(/"limit", "per_page"/)
    const first = await callOk<SearchJobsResult>(mcp, 'search_jobs', {})
    expect(first.structured.jobs).toHaveLength(PAGE_SIZE)
    expect(first.structured.has_more).toBe(true)

    const last = await callOk<SearchJobsResult>(mcp, 'search_jobs', { page: MAX_PAGE })
    expect(last.structured).toMatchObject({ page: MAX_PAGE, has_more: false, jobs: [], total: allJobs.length })
  })

  it('has_more is false on a last page that is exactly full', async () => {
    // A posting window whose match count is a multiple of 25, found through the v2 list.
    let days = 0
    let total = 0
    for (let n = 1; n <= 365 && days === 0; n++) {
      const response = await fetch(`${server.url}/api/v2/jobs?posted_after=${n}&limit=1`)
      total = ((await response.json()) as { total: number }).total
      if (total > 0 && total % PAGE_SIZE === 0) days = n
    }
    expect(days, 'some posting window matches a multiple of 25 jobs').toBeGreaterThan(0)
    const last = total / PAGE_SIZE
    const { structured } = await callOk<SearchJobsResult>(mcp, 'search_jobs', { posted_within_days: days, page: last })
    expect(structured).toMatchObject({ total, page: last, has_more: false })
    expect(structured.jobs).toHaveLength(PAGE_SIZE)
    expect((await allSearchJobs({ posted_within_days: days })).pages).toBe(last)
  })

  it('reads posted_within_days 0 as no date restriction, as REST reads posted_after=0', async () => {
    const all = await callOk<SearchJobsResult>(mcp, 'search_jobs', {})
    const zero = await callOk<SearchJobsResult>(mcp, 'search_jobs', { posted_within_days: 0 })
    expect(zero.structured).toEqual(all.structured)
    const oneDay = await callOk<SearchJobsResult>(mcp, 'search_jobs', { posted_within_days: 1 })
    expect(oneDay.structured.total, 'a one-day window restricts').toBeLessThan(all.structured.total)
  })

  it('answers an empty match of known values with total 0, not an error, and a hint', async () => {
    const { structured } = await callOk<SearchJobsResult>(mcp, 'search_jobs', { query: 'zzzqqqxxx' })
    expect(structured).toEqual({
      total: 0,
      page: 1,
      has_more: false,
      jobs: [],
      hint: 'No job has the word "zzzqqqxxx" (nothing near). Retry with a nearest word, or without it.',
    })
    const found = await callOk<SearchJobsResult>(mcp, 'search_jobs', { query: 'python' })
    expect(found.structured.total).toBeGreaterThan(0)
    expect(found.structured).not.toHaveProperty('hint')
  })

  it('says which query words matched nothing and the nearest known words, when a query finds nothing', async () => {
    // Two edits from "python": beyond the one typo a search forgives, within what a hint looks at.
    const known = allJobs[0]!.title
      .split(/\s+/)
      .find((word) => /^[a-z]{4,}$/i.test(word))!
      .toLowerCase()
    const { structured } = await callOk<SearchJobsResult>(mcp, 'search_jobs', { query: `Pytxxn ${known}` })
    expect(structured.total).toBe(0)
    expect(structured.hint).toMatch(/^No job has the word "pytxxn" \(nearest: "python"/)
    expect(structured.hint, 'a word some job has is not named').not.toContain(`"${known}"`)
    const two = await callOk<SearchJobsResult>(mcp, 'search_jobs', { query: 'pytxxn zzzqqqxxx' })
    expect(two.structured.hint).toMatch(
      /^No job has the words "pytxxn" \(nearest: "python".*\), "zzzqqqxxx" \(nothing near\)\. Retry/,
    )
    // Words every one of which some job has, that no job has with the other filters: said so, nothing to correct.
    let apart: Record<string, unknown> | undefined
    for (const schedule of SCHEDULES)
      for (const work_arrangement of ['onsite', 'hybrid', 'remote'])
        if (!apart && (await allV2Jobs(server.url, { q: known, schedule, work_arrangement })).total === 0)
          apart = { query: known, schedule: [schedule], work_arrangement: [work_arrangement] }
    expect(apart, `some schedule and arrangement have no job with "${known}"`).toBeDefined()
    const filtered = await callOk<SearchJobsResult>(mcp, 'search_jobs', apart!)
    expect(filtered.structured.total).toBe(0)
    expect(filtered.structured.hint).toMatch(/^Every query word is in some job, but no live job matches them all/)
    // REST finds nothing for the same words: the hint is about the words, not a different matching.
    expect((await allV2Jobs(server.url, { q: `pytxxn ${known}` })).total).toBe(0)
  })

  it.each([
    [{ skills: ['pyhton'] }, 'skills', 'python'],
    [{ category: ['enginering'] }, 'category', 'engineering'],
    [{ country: 'Germny' }, 'country', 'Germany'],
  ] as [Record<string, unknown>, string, string][])(
    'answers an unknown %j with a tool error naming %s and the closest known values',
    async (args, argument, closest) => {
      const text = await callError(mcp, 'search_jobs', args)
      expect(text).toContain(argument)
      expect(text).toContain(`"${closest}"`)
    },
  )

  it('suggests, for a name that is no country, only countries some job names', async () => {
    const named = new Set(
      allJobs.flatMap((job) =>
        [...(job.office_locations ?? []), ...(job.remote_allowed ?? [])].flatMap((place) =>
          place.country ? [place.country] : [],
        ),
      ),
    )
    const text = await callError(mcp, 'search_jobs', { country: 'Narnia' })
    const suggested = [...text.matchAll(/"([^"]+)"/g)].map((m) => m[1]!).filter((name) => name !== 'Narnia')
    expect(suggested.length).toBeGreaterThan(0)
    for (const name of suggested) expect(named.has(name), `${name} is named by some job`).toBe(true)
  })

  it.each([
    ['Europe', 'continent', (code: CountryCode) => countryContinent(code) === 'EU'],
    ['emea', 'region', (code: CountryCode) => regionsOfCountry(code).includes('EMEA')],
  ] as const)(
    'answers country %j with a tool error saying it is a %s and naming countries in it',
    async (value, kind, inside) => {
      const text = await callError(mcp, 'search_jobs', { country: value })
      expect(text).toContain(`is a ${kind}`)
      const named = [...text.matchAll(/"([^"]+)"/g)].map((m) => m[1]!).filter((name) => name !== value)
      expect(named.length).toBeGreaterThan(0)
      for (const name of named) expect(inside(resolveCountry(name)!), name).toBe(true)
    },
  )

  it('refuses an argument it does not take instead of ignoring it', async () => {
    const text = await callInvalid(mcp, 'search_jobs', { location: 'Germany' })
    expect(text).toMatch(/unknown argument "location"/)
    expect(text).toContain('country')
  })

  it('takes only the closed vocabularies it lists: a level outside them is a tool error naming the allowed ones', async () => {
    const text = await callInvalid(mcp, 'search_jobs', { level: ['wizard'] })
    expect(text).toContain('level')
    expect(text).toContain('"senior"')
  })

  it.each([
    [{ page: 201 }, 'page'],
    [{ page: 0 }, 'page'],
    [{ page: 1.5 }, 'page'],
    [{ page: '2' }, 'page'],
    [{ schedule: ['four_day_week'] }, 'schedule'],
    [{ schedule: '4_day_week' }, 'schedule'],
    [{ work_arrangement: ['office'] }, 'work_arrangement'],
    [{ sort: 'relevance' }, 'sort'],
    [{ query: 'x'.repeat(201) }, 'query'],
    [{ min_work_life_score: 101 }, 'min_work_life_score'],
    [{ posted_within_days: -1 }, 'posted_within_days'],
    [{ posted_within_days: 366 }, 'posted_within_days'],
  ] as [Record<string, unknown>, string][])('rejects %j with a tool error naming %s', async (args, argument) => {
    const text = await callInvalid(mcp, 'search_jobs', args)
    expect(text).toContain(argument)
  })

  it.each([
    [{ page: 1.5 }, 'page: expected an integer, got 1.5'],
    [{ page: '2' }, 'page: expected a number, got the string "2"'],
    [{ skills: 'python' }, 'skills: expected a list (a JSON array), got the string "python"'],
    [{ min_work_life_score: -1 }, 'min_work_life_score: must be at least 0'],
    [{ query: 'x'.repeat(201) }, 'query: must be at most 200 characters'],
    [
      { work_arrangement: ['office'] },
      'work_arrangement.0: must be one of "onsite", "hybrid", "remote", got the string "office"',
    ],
  ] as [Record<string, unknown>, string][])(
    "words %j as %j, without the validator library's jargon",
    async (args, words) => {
      const text = await callInvalid(mcp, 'search_jobs', args)
      expect(text).toContain(words)
      expect(text).not.toMatch(/Invalid input|Too (big|small)|received/)
    },
  )

  it("names one problem for a page of 1e20: the page limit, not the number type's range", async () => {
    const text = await callInvalid(mcp, 'search_jobs', { page: 1e20 })
    expect(text).toMatch(/at most 200/)
    expect(text).not.toMatch(/9007199254740991/)
  })

  it('says page 201 is over the limit of 200', async () => {
    const text = await callInvalid(mcp, 'search_jobs', { page: 201 })
    expect(text).toMatch(/page/)
    expect(text).toMatch(/200/)
  })

  it.each([
    [{ schedule: '4_day_week' }, 'schedule: expected a list (a JSON array), got the string "4_day_week"'],
    [{ skills: 'python' }, 'skills: expected a list (a JSON array), got the string "python"'],
    [{ country: ['DE'] }, 'country: expected a string'],
    [{ page: '2' }, 'page: expected a number, got the string "2"'],
    [{ page: 0 }, 'page: page must be at least 1'],
    [{ limit: 10 }, 'unknown argument "limit" (search_jobs takes query, '],
  ] as [Record<string, unknown>, string][])(
    'answers %j as a tool result with isError (SEP-1303) saying %j, so the model sees it and retries',
    async (args, words) => {
      expect(await callInvalid(mcp, 'search_jobs', args)).toContain(words)
    },
  )

  it('office_country: jobs with an office there, as REST office_country; no office there -> a tool error with the nearest', async () => {
    const offices = new Map<string, number>()
    for (const job of allJobs)
      for (const office of job.office_locations ?? []) {
        const code = office.country && resolveCountry(office.country)
        if (code) offices.set(code, (offices.get(code) ?? 0) + 1)
      }
    const busiest = [...offices].sort((a, b) => b[1] - a[1]).map(([code]) => code)
    expect(busiest.length).toBeGreaterThan(1)
    for (const countries of [[busiest[0]!], [busiest[0]!.toLowerCase(), busiest[1]!]]) {
      const rest = await allV2Jobs(server.url, { office_country: countries.join(',') })
      expect(rest.total).toBeGreaterThan(0)
      const { jobs } = await allSearchJobs({ office_country: countries })
      expect(jobs.map((j) => j.slug)).toEqual(rest.jobs.map((j) => j.slug))
      for (const job of jobs) expect(job.locations, job.slug).toMatch(/^office: /)
    }
    const anywhere = await callOk<SearchJobsResult>(mcp, 'search_jobs', { country: busiest[0]! })
    const office = await callOk<SearchJobsResult>(mcp, 'search_jobs', { office_country: [busiest[0]!] })
    expect(office.structured.total).toBeLessThan(anywhere.structured.total)

    expect(await callError(mcp, 'search_jobs', { office_country: ['Germny'] })).toMatch(/^office_country: .*"Germany"/)
    expect(await callError(mcp, 'search_jobs', { office_country: ['Europe'] })).toMatch(
      /office_country: "Europe" is a continent/,
    )
    const noOffice = ['Tuvalu', 'Nauru', 'Palau'].find((name) => !offices.has(resolveCountry(name)!))!
    const text = await callError(mcp, 'search_jobs', { office_country: [noOffice] })
    expect(text).toContain(`no live job has an office in ${noOffice}`)
    const suggested = [...text.matchAll(/"([^"]+)"/g)].map((m) => resolveCountry(m[1]!)!)
    expect(suggested.length).toBeGreaterThan(0)
    for (const code of suggested) expect(offices.has(code), code).toBe(true)
    expect(await callInvalid(mcp, 'search_jobs', { office_country: 'DE' })).toContain('office_country: expected a list')
  })

  it('reads level in any letter case, as category and REST do', async () => {
    const lower = await callOk<SearchJobsResult>(mcp, 'search_jobs', { level: ['senior'] })
    expect(lower.structured.total).toBeGreaterThan(0)
    expect(lower.structured.total).toBe((await allV2Jobs(server.url, { level: 'Senior' })).total)
    for (const level of [['Senior'], ['SENIOR']]) {
      const { structured } = await callOk<SearchJobsResult>(mcp, 'search_jobs', { level })
      expect(structured, JSON.stringify(level)).toEqual(lower.structured)
    }
    const mixed = await callOk<SearchJobsResult>(mcp, 'search_jobs', { level: ['Senior'], schedule: ['4_Day_Week'] })
    const rest = await allV2Jobs(server.url, { level: 'senior', schedule: '4_day_week' })
    expect(mixed.structured.total).toBe(rest.total)
    expect(await callInvalid(mcp, 'search_jobs', { level: ['Wizard'] })).toContain('"senior"')
  })
})

describe('no compressed schedule is presented as a four-day week', () => {
  it('marks only 4_day_week as a four-day week in every search result', async () => {
    const { jobs } = await allSearchJobs({})
    expect(jobs).toHaveLength(fixture.build.manifest.counts.live_jobs)
    const compressed = jobs.filter((j) => j.schedule === 'compressed_hours')
    expect(compressed.length, 'the dataset has compressed-hours jobs').toBeGreaterThan(0)
    for (const job of jobs) {
      if (!job.schedule) continue
      expect(job.is_four_day_week, job.slug).toBe(job.schedule === '4_day_week')
    }
    for (const job of compressed) expect(job.is_four_day_week).toBe(false)
  })

  it('a four-day-week search returns no compressed-hours job', async () => {
    const { jobs } = await allSearchJobs({ schedule: ['4_day_week'] })
    expect(jobs.length).toBeGreaterThan(0)
    for (const job of jobs) expect(job).toMatchObject({ schedule: '4_day_week', is_four_day_week: true })
  })

  it('get_job and get_company describe compressed hours as the same hours, not a four-day week', async () => {
    const job = allJobs.find((j) => j.schedule_type === 'compressed_hours')!
    const got = await callOk<GetJobResult>(mcp, 'get_job', { slug: job.slug })
    expect(got.structured).toMatchObject({ schedule: 'compressed_hours', is_four_day_week: false })

    const company = companies.find((c) => c.schedule_type === 'compressed_hours')!
    const profile = await callOk<GetCompanyResult>(mcp, 'get_company', { slug: company.slug })
    expect(profile.structured.schedule).toMatchObject({
      type: 'compressed_hours',
      reduces_hours: false,
      is_four_day_week: false,
    })
    expect(profile.structured.schedule.definition).toMatch(/not a four-day week/i)
    expect(profile.structured.schedule.label).not.toMatch(FOUR_DAY_WORDING)
  })
})

describe('get_job', () => {
  it('returns exactly what GET /api/v2/jobs/{slug} returns, for a spread of jobs', async () => {
    const sample = allJobs.filter((_, i) => i % 7 === 0)
    // Make sure the spread covers the interesting shapes.
    for (const job of allJobs) {
      if (
        job.salary_period === 'hour' ||
        job.salary_period === 'month' ||
        job.hours_per_week_min !== undefined ||
        !job.company
      )
        sample.push(job)
      if (sample.length > 140) break
    }
    for (const job of sample) {
      const rest = await getV2Job(server.url, job.slug)
      expect(rest.status).toBe(200)
      const { structured, text } = await callOk<GetJobResult>(mcp, 'get_job', { slug: job.slug })
      expect(structured.job, job.slug).toEqual(rest.body)
      expect(structured.schedule).toBe(job.schedule_type)
      expect(structured.salary !== undefined, `${job.slug}: a readable salary only when published`).toBe(
        job.salary_min !== undefined || job.salary_max !== undefined,
      )
      if (job.hours_per_week_max !== undefined)
        expect(structured.weekly_hours).toContain(String(job.hours_per_week_max))
      expect(text).toContain(job.title)
      expect(text).toContain(job.url)
      if (job.company) expect(structured.company_summary).toContain(job.company.slug)
    }
  })

  it("gives a job without hours of its own its employer's hours only when it is on the employer's schedule", async () => {
    const bySlug = companyBySlug()
    const offSchedule = allJobs.filter(
      (job) =>
        job.hours_per_week_max === undefined &&
        job.hours_per_week_min === undefined &&
        job.schedule_type !== undefined &&
        job.company !== undefined &&
        bySlug.get(job.company.slug)?.hours_full_time !== undefined &&
        bySlug.get(job.company.slug)!.schedule_type !== job.schedule_type,
    )
    expect(offSchedule.length, 'the fixture has such jobs').toBeGreaterThan(0)
    for (const job of offSchedule.slice(0, 30)) {
      const { structured } = await callOk<GetJobResult>(mcp, 'get_job', { slug: job.slug })
      expect(structured.weekly_hours, job.slug).not.toMatch(/employer/)
      expect(structured.weekly_hours, job.slug).toContain(`typical of ${job.schedule_type}`)
    }
  })

  it('gives the annual USD range the salary filters use: salary_min up to its max and salary_max down to its min find the job', async () => {
    const ranged = allJobs.filter((j) => j.salary_min !== undefined && j.salary_max !== undefined && j.company)
    const periods = new Set(ranged.map((j) => `${j.salary_period}:${j.salary_currency === 'USD'}`))
    expect(periods.size, 'the sample spans periods and currencies').toBeGreaterThan(2)
    const sample = [...new Map(ranged.map((j) => [`${j.salary_period}:${j.salary_currency}`, j])).values()].slice(0, 8)
    const finds = async (job: V2Job, filter: Record<string, string>) =>
      (await allV2Jobs(server.url, { company: job.company!.slug, ...filter })).jobs.some((j) => j.slug === job.slug)
    for (const job of sample) {
      const { structured } = await callOk<GetJobResult>(mcp, 'get_job', { slug: job.slug })
      const usd = structured.salary_usd_annual!
      expect(usd, job.slug).toBeDefined()
      expect(usd.min!).toBeLessThanOrEqual(usd.max!)
      expect(await finds(job, { salary_min: String(usd.max) }), `${job.slug}: salary_min=${usd.max}`).toBe(true)
      expect(await finds(job, { salary_min: String(usd.max! + 1) }), `${job.slug}: salary_min=${usd.max! + 1}`).toBe(
        false,
      )
      expect(await finds(job, { salary_max: String(usd.min) }), `${job.slug}: salary_max=${usd.min}`).toBe(true)
      expect(await finds(job, { salary_max: String(usd.min! - 1) }), `${job.slug}: salary_max=${usd.min! - 1}`).toBe(
        false,
      )
    }
    const oneSided = allJobs.find((j) => (j.salary_min === undefined) !== (j.salary_max === undefined))
    if (oneSided) {
      const { structured } = await callOk<GetJobResult>(mcp, 'get_job', { slug: oneSided.slug })
      expect(Object.keys(structured.salary_usd_annual!)).toEqual([oneSided.salary_min === undefined ? 'max' : 'min'])
    }
    const unpaid = allJobs.find((j) => j.salary_min === undefined && j.salary_max === undefined)!
    expect((await callOk<GetJobResult>(mcp, 'get_job', { slug: unpaid.slug })).structured).not.toHaveProperty(
      'salary_usd_annual',
    )
  })

  it('answers an unknown slug with a tool error that says to call search_jobs', async () => {
    const text = await callError(mcp, 'get_job', { slug: 'no-such-job-anywhere' })
    expect(text).toContain('no-such-job-anywhere')
    expect(text).toContain('search_jobs')
  })

  it('rejects a missing or empty slug with a tool error naming the argument', async () => {
    expect(await callInvalid(mcp, 'get_job', {})).toContain('slug')
    expect(await callInvalid(mcp, 'get_job', { slug: '' })).toContain('slug')
    expect(await callInvalid(mcp, 'get_job', { slug: 42 })).toContain('slug')
  })
})

describe('search_companies', () => {
  const countryCodes: Record<string, string> = {
    Germany: 'DE',
    'United Kingdom': 'GB',
    'United States': 'US',
    France: 'FR',
    Netherlands: 'NL',
    Denmark: 'DK',
    Spain: 'ES',
  }

  /** Live jobs per employer slug, from GET /api/v2/jobs. */
  const liveJobsBySlug = () => {
    const counts = new Map<string, number>()
    for (const job of allJobs) counts.set(job.company!.slug, (counts.get(job.company!.slug) ?? 0) + 1)
    return counts
  }
  /** The employers with a live job (the only ones listed, as REST lists them). */
  const hiring = () => companies.filter((c) => liveJobsBySlug().has(c.slug))

  it('pages every employer with a live job, at most 25 a call, busiest first', async () => {
    const { total, companies: found } = await allSearchCompanies({})
    expect(total).toBe(hiring().length)
    expect(total).toBeGreaterThan(PAGE_SIZE * 2)
    expect(new Set(found.map((c) => c.slug))).toEqual(new Set(hiring().map((c) => c.slug)))
    for (let i = 1; i < found.length; i++) expect(found[i - 1]!.live_jobs).toBeGreaterThanOrEqual(found[i]!.live_jobs)
    const liveJobs = liveJobsBySlug()
    for (const c of found) expect(c.live_jobs, c.slug).toBe(liveJobs.get(c.slug))
  })

  it.each([
    [
      'schedule compressed_hours',
      { schedule: ['compressed_hours'] },
      (c: DatasetCompany) => c.schedule_type === 'compressed_hours',
    ],
    [
      'schedule 4_day_week or 9_day_fortnight',
      { schedule: ['4_day_week', '9_day_fortnight'] },
      (c: DatasetCompany) => c.schedule_type === '4_day_week' || c.schedule_type === '9_day_fortnight',
    ],
    ['fully remote', { remote_level: ['fully_remote'] }, (c: DatasetCompany) => c.remote_level === 'fully_remote'],
    ['hires worldwide', { hires_worldwide: true }, (c: DatasetCompany) => c.hires_worldwide === true],
    [
      'does not hire worldwide, onsite',
      { hires_worldwide: false, remote_level: ['onsite'] },
      (c: DatasetCompany) => !c.hires_worldwide && c.remote_level === 'onsite',
    ],
  ] as [string, Record<string, unknown>, (c: DatasetCompany) => boolean][])(
    'filters like the dataset says: %s',
    async (_name, args, predicate) => {
      const expected = hiring()
        .filter(predicate)
        .map((c) => c.slug)
      expect(expected.length, 'the filter is not vacuous').toBeGreaterThan(0)
      const { companies: found } = await allSearchCompanies(args)
      expect(found.map((c) => c.slug).sort()).toEqual(expected.sort())
      const bySlug = companyBySlug()
      for (const c of found) {
        const raw = bySlug.get(c.slug)!
        expect(c).toMatchObject({
          name: raw.name,
          remote_level: raw.remote_level,
          hires_worldwide: raw.hires_worldwide,
        })
        expect(c.schedule).toBe(raw.schedule_type)
        expect(c.is_four_day_week).toBe(raw.schedule_type === '4_day_week')
      }
    },
  )

  it('filters by headquarters country, by name or ISO code alike', async () => {
    const name = Object.keys(countryCodes).find((country) => hiring().some((c) => c.country === country))!
    const expected = hiring()
      .filter((c) => c.country === name)
      .map((c) => c.slug)
      .sort()
    const byName = await allSearchCompanies({ country: name })
    const byCode = await allSearchCompanies({ country: countryCodes[name]!.toLowerCase() })
    expect(byName.companies.map((c) => c.slug).sort()).toEqual(expected)
    expect(byCode.companies.map((c) => c.slug).sort()).toEqual(expected)
    expect(await callError(mcp, 'search_companies', { country: 'Atlantis' })).toMatch(/country: "Atlantis"/)
  })

  it('finds employers by words of the name or one-line description, exactly as GET /api/v2/companies?q= does', async () => {
    const target = hiring()[3]!
    const described = hiring().find((c) => c.short_description)!
    const queries = [
      target.name.split(/\s+/)[0]!.slice(0, 4).toUpperCase(),
      described.short_description!.split(/\s+/).find((word) => /^[a-z]{5,}$/i.test(word))!,
      'nc',
    ]
    for (const query of queries) {
      const { companies: found } = await allSearchCompanies({ query })
      const rest: string[] = []
      for (let page = 1; ; page++) {
        const response = await fetch(
          `${server.url}/api/v2/companies?sort=jobs&limit=100&page=${page}&q=${encodeURIComponent(query)}`,
        )
        const body = (await response.json()) as { data: { slug: string }[]; has_more: boolean }
        rest.push(...body.data.map((c) => c.slug))
        if (!body.has_more) break
      }
      expect(
        found.map((c) => c.slug),
        query,
      ).toEqual(rest)
    }
    expect((await allSearchCompanies({ query: queries[0]! })).companies.map((c) => c.slug)).toContain(target.slug)
    expect((await allSearchCompanies({ query: queries[1]! })).companies.map((c) => c.slug)).toContain(described.slug)
  })

  it.each([
    [{ page: 201 }, 'page'],
    [{ page: 0 }, 'page'],
    [{ remote_level: ['hybrid'] }, 'remote_level'],
    [{ schedule: ['four_day'] }, 'schedule'],
    [{ hires_worldwide: 'yes' }, 'hires_worldwide'],
  ] as [Record<string, unknown>, string][])('rejects %j with a tool error naming %s', async (args, argument) => {
    expect(await callInvalid(mcp, 'search_companies', args)).toContain(argument)
  })

  it('accepts page 200 and answers it empty', async () => {
    const { structured } = await callOk<SearchCompaniesResult>(mcp, 'search_companies', { page: MAX_PAGE })
    expect(structured).toEqual({ total: companies.length, page: MAX_PAGE, has_more: false, companies: [] })
  })
})

describe('get_company', () => {
  it('shows day off, vacation and awards exactly when the employer published them, for every employer', async () => {
    // The dataset must have both cases of each, or this test proves nothing.
    for (const key of ['day_off', 'vacation_days', 'awards'] as const) {
      expect(
        companies.some((c) => c[key] !== undefined),
        `some employer publishes ${key}`,
      ).toBe(true)
      expect(
        companies.some((c) => c[key] === undefined),
        `some employer does not publish ${key}`,
      ).toBe(true)
    }
    const liveJobs = new Map<string, number>()
    for (const job of allJobs) liveJobs.set(job.company!.slug, (liveJobs.get(job.company!.slug) ?? 0) + 1)

    for (const raw of companies) {
      const { structured: c } = await callOk<GetCompanyResult>(mcp, 'get_company', { slug: raw.slug })
      for (const key of [
        'day_off',
        'vacation_days',
        'awards',
        'work_life_score',
        'hours_full_time',
        'country',
        'employees',
      ] as const) {
        if (raw[key] === undefined) expect(c, `${raw.slug}: ${key} absent, never invented`).not.toHaveProperty(key)
        else expect(c[key], `${raw.slug}: ${key}`).toEqual(raw[key])
      }

      expect(c).toMatchObject({ slug: raw.slug, name: raw.name, url: raw.url, benefits: raw.benefits ?? [] })
      expect(c.schedule).toMatchObject({
        type: raw.schedule_type,
        is_four_day_week: raw.schedule_type === '4_day_week',
      })
      if (raw.schedule_policy_text) expect(c.schedule.policy_text).toBe(raw.schedule_policy_text)
      expect(c).toMatchObject({ remote_level: raw.remote_level, hires_worldwide: raw.hires_worldwide ?? false })
      expect(c.office_policy.length).toBeGreaterThan(3)
      expect(c.live_jobs, `${raw.slug}: live jobs as the v2 list counts them`).toBe(liveJobs.get(raw.slug) ?? 0)
    }
  })

  it('carries every field GET /api/v2/companies/{slug} has, with the same values (the resource too)', async () => {
    const withLogo = companies.find((c) => c.logo_url && c.category)
    expect(withLogo, 'the fixture has an employer with a logo and a category').toBeDefined()
    for (const raw of [withLogo!, ...companies.slice(0, 5)]) {
      const response = await fetch(`${server.url}/api/v2/companies/${raw.slug}`)
      if (response.status === 404) continue
      const rest = (await response.json()) as Record<string, unknown>
      const { structured } = await callOk<GetCompanyResult & Record<string, unknown>>(mcp, 'get_company', {
        slug: raw.slug,
      })
      const { schedule_type, schedule_policy_text, benefits, ...same } = rest
      expect(structured, raw.slug).toMatchObject(same)
      expect(structured.schedule.type).toBe(schedule_type)
      expect(structured.schedule.policy_text).toBe(schedule_policy_text)
      expect(structured.benefits).toEqual(benefits ?? [])
      for (const key of ['id', 'category', 'logo_url', 'jobs_url'])
        if (key in rest) expect(structured, `${raw.slug}: ${key}`).toHaveProperty(key, rest[key])
      const read = await mcp.client.readResource({ uri: `jobsnap://companies/${raw.slug}` })
      expect(JSON.parse((read.contents[0] as { text: string }).text)).toEqual(structured)
    }
  })

  it('answers an unknown slug with a tool error that says to call search_companies', async () => {
    const text = await callError(mcp, 'get_company', { slug: 'no-such-employer' })
    expect(text).toContain('no-such-employer')
    expect(text).toContain('search_companies')
  })

  it('does not take a job slug for an employer', async () => {
    expect(await callError(mcp, 'get_company', { slug: allJobs[0]!.slug })).toContain('search_companies')
  })

  it('rejects a missing slug with a tool error naming the argument', async () => {
    expect(await callInvalid(mcp, 'get_company', {})).toContain('slug')
  })
})

describe('get_market_stats', () => {
  it('states the as-of date, its caveats and figures that agree with the dataset and the v2 list', async () => {
    const { structured: s, text } = await callOk<MarketStatsResult>(mcp, 'get_market_stats', {})
    expect(s.as_of).toBe(fixture.build.manifest.built_at)
    expect(s.as_of.startsWith(FIXTURE_NOW.toISOString().slice(0, 10))).toBe(true)
    expect(text).toContain(s.as_of.slice(0, 10))
    expect(s.caveats.length).toBeGreaterThan(0)
    for (const caveat of s.caveats) {
      expect(caveat.trim().length).toBeGreaterThan(10)
      expect(text, 'the caveats are in the text a model reads').toContain(caveat)
    }

    expect(s.employers_tracked).toBe(companies.length)
    expect(s.live_jobs).toBe(allJobs.length)
    for (const type of SCHEDULES) {
      const count = companies.filter((c) => c.schedule_type === type).length
      expect(
        s.employers_by_schedule.find((row) => row.schedule_type === type),
        type,
      ).toMatchObject({ employers: count, share: round3(count / companies.length) })
    }
    const fourDay = companies.filter((c) => c.schedule_type === '4_day_week').length
    const compressed = companies.filter((c) => c.schedule_type === 'compressed_hours').length
    expect(compressed, 'the dataset has compressed-hours employers').toBeGreaterThan(0)
    expect(s.true_four_day_week_employer_share).toBe(round3(fourDay / companies.length))
    expect(s.true_four_day_week_employer_share, 'compressed hours not counted as four-day weeks').not.toBe(
      round3((fourDay + compressed) / companies.length),
    )
    expect(s.median_full_time_weekly_hours).toBe(
      median(companies.flatMap((c) => (c.hours_full_time === undefined ? [] : [c.hours_full_time]))),
    )
    for (const arrangement of ['remote', 'hybrid', 'onsite'] as const) {
      expect(s.remote_share_of_jobs[arrangement]).toBe(
        round3(allJobs.filter((j) => j.work_arrangement === arrangement).length / allJobs.length),
      )
    }
  })

  it('tells where the bulk exports are, as /api/v2/exports lists them', async () => {
    const { structured: s } = await callOk<MarketStatsResult>(mcp, 'get_market_stats', {})
    const index = (await (await fetch(`${server.url}${s.bulk_exports.index_url}`)).json()) as {
      snapshot_id: string
      files: { name: string; url: string; bytes: number; rows: number; sha256: string }[]
    }
    expect(s.bulk_exports.snapshot_id).toBe(index.snapshot_id)
    expect(s.bulk_exports.files).toEqual(
      index.files.map(({ name, url, bytes, rows, sha256 }) => ({ name, url, bytes, rows, sha256 })),
    )
    expect(s.bulk_exports.files.find((file) => file.name === 'jobs.ndjson.gz')?.rows).toBe(allJobs.length)
    expect(s.bulk_exports.how_to_mirror).toContain('/api/v2/changes?since=')
  })

  it('takes no arguments, and refuses stray ones rather than ignoring them', async () => {
    await callOk<MarketStatsResult>(mcp, 'get_market_stats', {})
    const text = await callInvalid(mcp, 'get_market_stats', { as_of: '1999-01-01', country: 'Germany' })
    expect(text).toMatch(/unknown arguments "as_of", "country"/)
  })
})

describe('explain_schedule_type', () => {
  it('defines every schedule type; compressed hours does not reduce hours and is not a four-day week', async () => {
    const { structured, text } = await callOk<ExplainResult>(mcp, 'explain_schedule_type', {})
    expect(structured.schedule_types.map((s) => s.type).sort()).toEqual([...SCHEDULES].sort())
    expect(structured.schedule_types.filter((s) => s.is_four_day_week).map((s) => s.type)).toEqual(['4_day_week'])
    const compressed = structured.schedule_types.find((s) => s.type === 'compressed_hours')!
    expect(compressed).toMatchObject({
      reduces_hours: false,
      is_four_day_week: false,
      full_pay: true,
      typical_weekly_hours: 40,
    })
    expect(compressed.definition).toMatch(/not a four-day week/i)
    expect(structured.note).toMatch(/compressed_hours[^.]*never is/i)
    const fourDay = structured.schedule_types.find((s) => s.type === '4_day_week')!
    expect(fourDay).toMatchObject({ reduces_hours: true, full_pay: true, is_four_day_week: true })
    expect(fourDay.typical_weekly_hours).toBeLessThan(compressed.typical_weekly_hours)
    const partTime = structured.schedule_types.find((s) => s.type === 'part_time')!
    expect(partTime).toMatchObject({ reduces_hours: true, full_pay: false })
    expect(text).toMatch(/compressed_hours[^.]*never is/i)
  })

  it('explains one type on request', async () => {
    const { structured } = await callOk<ExplainResult>(mcp, 'explain_schedule_type', {
      schedule_type: 'compressed_hours',
    })
    expect(structured.schedule_types).toHaveLength(1)
    expect(structured.schedule_types[0]).toMatchObject({
      type: 'compressed_hours',
      reduces_hours: false,
      is_four_day_week: false,
    })
  })

  it('rejects an unknown type with a tool error naming the argument', async () => {
    const text = await callInvalid(mcp, 'explain_schedule_type', { schedule_type: 'four_day_week' })
    expect(text).toContain('schedule_type')
  })
})

describe('resource templates, the find_jobs prompt and completions', () => {
  it('lists the job and employer templates, and no flat list of a whole snapshot', async () => {
    const { resourceTemplates } = await mcp.client.listResourceTemplates()
    expect(resourceTemplates.map((t) => t.uriTemplate).sort()).toEqual([
      'jobsnap://companies/{slug}',
      'jobsnap://jobs/{slug}',
    ])
    expect((await mcp.client.listResources()).resources).toEqual([])
  })

  it('reads a job as exactly the bytes GET /api/v2/jobs/{slug} returns, and an employer as get_company does', async () => {
    const job = allJobs[3]!
    const read = await mcp.client.readResource({ uri: `jobsnap://jobs/${job.slug}` })
    const content = read.contents[0] as { uri: string; mimeType?: string; text: string }
    expect(content).toMatchObject({ uri: `jobsnap://jobs/${job.slug}`, mimeType: 'application/json' })
    const rest = await fetch(`${server.url}/api/v2/jobs/${job.slug}`)
    expect(content.text).toBe(await rest.text())

    const company = companies[0]!
    const profile = await callOk<GetCompanyResult>(mcp, 'get_company', { slug: company.slug })
    const employer = await mcp.client.readResource({ uri: `jobsnap://companies/${company.slug}` })
    expect(JSON.parse((employer.contents[0] as { text: string }).text)).toEqual(profile.structured)
  })

  it('answers a URI that names nothing with -32002', async () => {
    for (const uri of ['jobsnap://jobs/no-such-job', 'jobsnap://companies/no-such-employer', 'https://example.com/']) {
      const error = await mcp.client.readResource({ uri }).catch((caught: unknown) => caught)
      expect(error, uri).toBeInstanceOf(McpError)
      expect((error as McpError).code, uri).toBe(-32002)
    }
  })

  it('fills find_jobs from its arguments and refuses a schedule outside the vocabulary', async () => {
    const { prompts } = await mcp.client.listPrompts()
    expect(prompts.map((p) => p.name)).toEqual(['find_jobs'])
    expect(prompts[0]!.arguments?.map((a) => a.name).sort()).toEqual(['category', 'country', 'schedule', 'skills'])
    const filled = await mcp.client.getPrompt({
      name: 'find_jobs',
      arguments: { skills: 'Python, react', country: 'Germany', schedule: '4_day_week' },
    })
    const text = (filled.messages[0]!.content as { text: string }).text
    expect(text).toContain('search_jobs')
    expect(text).toContain('{"skills":["python","react"],"country":"Germany","schedule":["4_day_week"]}')
    const upper = await mcp.client.getPrompt({ name: 'find_jobs', arguments: { schedule: '4_Day_Week' } })
    expect((upper.messages[0]!.content as { text: string }).text).toContain('{"schedule":["4_day_week"]}')
    expect(text).toMatch(/never describe compressed_hours as one/)
    const error = await mcp.client
      .getPrompt({ name: 'find_jobs', arguments: { schedule: 'four_day' } })
      .catch((caught: unknown) => caught)
    expect((error as McpError).code).toBe(ErrorCode.InvalidParams)
  })

  it('refuses find_jobs with a skill or category no job has, naming the nearest known ones', async () => {
    for (const [args, nearest] of [
      [{ skills: 'python, pyhton' }, '"python"'],
      [{ category: 'enginering' }, '"engineering"'],
    ] as const) {
      const error = await mcp.client
        .getPrompt({ name: 'find_jobs', arguments: args })
        .catch((caught: unknown) => caught)
      expect((error as McpError).code, JSON.stringify(args)).toBe(ErrorCode.InvalidParams)
      expect((error as McpError).message).toContain(nearest)
    }
  })

  it('completes prompt arguments from the snapshot and template slugs from live jobs and employers', async () => {
    const prompt = { type: 'ref/prompt' as const, name: 'find_jobs' }
    const schedule = await mcp.client.complete({ ref: prompt, argument: { name: 'schedule', value: '4' } })
    expect(schedule.completion.values).toEqual(['4_day_week', '4_5_day_week'])
    const skill = allJobs.flatMap((j) => (j.skills ?? []).map((s) => s.slug))[0]!
    const skills = await mcp.client.complete({
      ref: prompt,
      argument: { name: 'skills', value: `python, ${skill.slice(0, 2)}` },
    })
    // Each value is the whole argument: the skills typed before the last comma, then a completion.
    expect(skills.completion.values).toContain(`python, ${skill}`)
    for (const value of skills.completion.values) expect(value.startsWith(`python, ${skill.slice(0, 2)}`)).toBe(true)
    // A skill already typed is not offered again.
    const again = await mcp.client.complete({
      ref: prompt,
      argument: { name: 'skills', value: `${skill}, ${skill.slice(0, 2)}` },
    })
    expect(again.completion.values).not.toContain(`${skill}, ${skill}`)
    const fresh = await mcp.client.complete({ ref: prompt, argument: { name: 'skills', value: skill.slice(0, 2) } })
    expect(fresh.completion.values, 'offered when not typed yet').toContain(skill)
    const country = await mcp.client.complete({ ref: prompt, argument: { name: 'country', value: 'germ' } })
    expect(country.completion.values).toEqual(['Germany'])

    const job = allJobs[5]!
    const jobSlugs = await mcp.client.complete({
      ref: { type: 'ref/resource', uri: 'jobsnap://jobs/{slug}' },
      argument: { name: 'slug', value: job.slug.slice(0, 8) },
    })
    expect(jobSlugs.completion.values).toContain(job.slug)
    const live = new Set(allJobs.map((j) => j.slug))
    for (const value of jobSlugs.completion.values) expect(live.has(value), value).toBe(true)
    const employerSlugs = await mcp.client.complete({
      ref: { type: 'ref/resource', uri: 'jobsnap://companies/{slug}' },
      argument: { name: 'slug', value: companies[0]!.slug },
    })
    expect(employerSlugs.completion.values[0]).toBe(companies[0]!.slug)
  })
})

describe('errors outside the tools', () => {
  it('an unknown tool is a -32602 protocol error naming the tools there are', async () => {
    const text = await callUnknownTool(mcp, 'delete_job', { slug: allJobs[0]!.slug })
    expect(text).toMatch(/delete_job/)
    expect(text).toContain('search_jobs')
  })
})

describe('expiry between refreshes', () => {
  it('stops serving a job whose expires_at passed, as the v2 endpoints do', async () => {
    const now = FIXTURE_NOW.getTime()
    const expiring = rawJobs
      .filter((j) => j.status === 'live' && j.expires_at !== undefined && Date.parse(j.expires_at) > now)
      .sort((a, b) => Date.parse(a.expires_at!) - Date.parse(b.expires_at!))[0]
    expect(expiring, 'the dataset has a live job that expires after the build').toBeDefined()
    const later = await startFixtureServer(
      fixture.distDir,
      { JOBSNAP_REST_LIMIT: 100_000, JOBSNAP_MCP_BURST: 100_000 },
      () => Date.parse(expiring!.expires_at!) + 1,
    )
    const session = await connectMcp(later.url)
    try {
      expect(
        (await callOk<GetJobResult>(mcp, 'get_job', { slug: expiring!.slug })).structured.job.slug,
        'live before',
      ).toBe(expiring!.slug)
      expect((await getV2Job(later.url, expiring!.slug)).status).toBe(404)
      expect(await callError(session, 'get_job', { slug: expiring!.slug })).toContain('search_jobs')
      const rest = await allV2Jobs(later.url)
      const { structured } = await callOk<SearchJobsResult>(session, 'search_jobs', {})
      expect(structured.total).toBe(rest.total)
      expect(structured.total).toBeLessThan(allJobs.length)
    } finally {
      await session.close()
      await later.close()
    }
  })
})
