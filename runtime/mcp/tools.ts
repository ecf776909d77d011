/**
 * The six seed MCP tools (list_filters and get_salary_benchmarks have files
 * of their own). Each is a strict zod input schema (an unknown
 * argument or a value outside a closed vocabulary is refused before the tool
 * runs), a zod output schema and a pure function over a loaded snapshot, so
 * the tools can be tested without a server and cannot drift from the REST
 * matching rules (search_jobs runs the same query engine as GET /api/v2/jobs).
 * Values of open vocabularies (skills, categories, countries) are checked
 * against the snapshot: an unknown one is a tool error naming the closest
 * known values, never a silent empty result.
 */
import { LRUCache } from 'lru-cache'
import { z } from 'zod'
import { NO_FILTER, type V2ListQuery } from '../../core/query.ts'
import { compact, toV2CompanyProfile } from '../../core/company.ts'
import { formatSalary } from '../../core/salary.ts'
import { queryTerms, queryTermsProblem } from '../../core/search.ts'
import type { V2Job } from '../../core/schema/api.ts'
import type { IndexedCompany } from '../../core/snapshot.ts'
import {
  LEVEL_LABELS,
  REMOTE_LEVELS,
  REMOTE_LEVEL_VALUES,
  SCHEDULE_TYPES,
  SCHEDULE_TYPE_VALUES,
  WORK_ARRANGEMENTS,
  type ScheduleType,
} from '../../core/taxonomy.ts'
import { runV2Query } from '../query/run-query.ts'
import { queryContext, type LoadedSnapshot } from '../snapshot/load.ts'
import { runCompanyQuery } from '../query/companies.ts'
import { liveJobsByCompany } from '../query/live-jobs.ts'
import { closedEnum } from './closed-enum.ts'
import { ToolError } from './errors.ts'
import { checkCategory, checkCountry, checkHeadquartersCountry, checkOfficeCountry, checkSkill } from './suggest.ts'
import { marketStats, MarketStatsSchema } from './market-stats.ts'

const RESULTS_PER_CALL = 25
const MAX_PAGE = 200

const FOUR_DAY_RULE = 'Only 4_day_week is a four-day week; compressed_hours (same hours, longer days) never is.'

/**
 * The schedule taxonomy in one line, from the taxonomy table: each value's
 * typical weekly hours and which are not at full pay. Carried by
 * search_jobs' description, so a model knows what it filters on before it
 * calls anything (explain_schedule_type has the full definitions); every
 * agent pays for tools/list in tokens, hence the terseness.
 */
const SCHEDULE_LINE = `Schedule weekly hours (all full pay but ${SCHEDULE_TYPE_VALUES.filter(
  (type) => !SCHEDULE_TYPES[type].fullPay,
).join(', ')}): ${SCHEDULE_TYPE_VALUES.map((type) => `${type} ${SCHEDULE_TYPES[type].typicalWeeklyHours}`).join(', ')}.`

const page = z
  .int()
  .min(1, 'page must be at least 1')
  .max(MAX_PAGE, `page must be at most ${MAX_PAGE}; narrow the filters instead of paging further`)
  .default(1)

const scheduleEnum = closedEnum(SCHEDULE_TYPE_VALUES)
const levelEnum = closedEnum(Object.keys(LEVEL_LABELS) as [string, ...string[]])

function scheduleFacts(type: ScheduleType | undefined) {
  if (!type) return undefined
  const s = SCHEDULE_TYPES[type]
  return { type, reduces_hours: s.reducesHours, full_pay: s.fullPay, is_four_day_week: s.isFourDayWeek }
}
/**
 * The schedule facts a job's or an employer's full record carries; `type` is
 * one of the schedule values the inputs list. Search results carry only the
 * type and whether it is a four-day week (explain_schedule_type has the rest),
 * since every agent pays for 25 of them per call.
 */
const ScheduleFacts = z.object({
  type: z.string(),
  reduces_hours: z.boolean(),
  full_pay: z.boolean(),
  is_four_day_week: z.boolean(),
})

/** A words argument: at most `maxCharacters`, and no more words than a search takes (never silently cut). */
function searchText(maxCharacters: number) {
  return z
    .string()
    .max(maxCharacters)
    .superRefine((text, ctx) => {
      const problem = queryTermsProblem(text)
      if (problem) ctx.addIssue({ code: 'custom', message: problem, input: text })
    })
    .optional()
}

// ---------- search_jobs ----------

export const SearchJobsInput = z.strictObject({
  query: searchText(200).describe('Words all in title, company, skills, places or text (prefixes too).'),
  schedule: z.array(scheduleEnum).optional(),
  category: z.array(z.string()).optional(),
  level: z.array(levelEnum).optional(),
  skills: z.array(z.string()).optional().describe('Slugs, e.g. python'),
  country: z.string().optional().describe('Name or ISO code: office or remote there.'),
  office_country: z.array(z.string()).optional().describe('Like country, offices only.'),
  work_arrangement: z.array(closedEnum(WORK_ARRANGEMENTS)).optional(),
  min_work_life_score: z.int().min(0).max(100).optional().describe('Above 0, unscored employers drop out.'),
  posted_within_days: z.int().min(0).max(365).optional().describe('0: any date.'),
  sort: closedEnum(['date', 'salary']).default('date').describe('salary: highest annual USD first.'),
  page,
})

const JobSummary = z.object({
  slug: z.string(),
  title: z.string(),
  company: z.string(),
  company_slug: z.string(),
  schedule: z.string().optional(),
  is_four_day_week: z.boolean().optional(),
  work_arrangement: z.string(),
  locations: z.string(),
  salary: z.string().optional(),
  posted_at: z.string(),
  url: z.string(),
})

export const SearchJobsOutput = z.object({
  total: z.int(),
  page: z.int(),
  has_more: z.boolean(),
  jobs: z.array(JobSummary),
  hint: z.string().optional(),
})

/** Suggestions per query word that matches nothing. */
const NEAREST_WORDS = 3

/**
 * Why a search with `query` found nothing, in words a model can act on: the
 * words no job has, with the nearest known words (an unknown skill gets the
 * same help, checkSkill), or that each word matches but not all together
 * with the other filters.
 */
function emptyQueryHint(snapshot: LoadedSnapshot, query: string): string | undefined {
  const unmatched = snapshot.text.unmatchedWords(query, NEAREST_WORDS)
  if (unmatched.length === 0)
    return queryTerms(query).length > 0
      ? 'Every query word is in some job, but no live job matches them all with these filters: drop a word or a filter.'
      : undefined
  const words = unmatched.map(
    ({ word, nearest }) =>
      `"${word}" (${nearest.length ? `nearest: ${nearest.map((known) => `"${known}"`).join(', ')}` : 'nothing near'})`,
  )
  return `No job has the word${unmatched.length > 1 ? 's' : ''} ${words.join(', ')}. Retry with a nearest word, or without ${unmatched.length > 1 ? 'them' : 'it'}.`
}

function locationsText(job: V2Job): string {
  const offices = (job.office_locations ?? []).map((l) => [l.city, l.country].filter(Boolean).join(', '))
  const remote = (job.remote_allowed ?? []).map((l) => l.country ?? l.continent ?? l.region).filter(Boolean)
  const parts = []
  if (offices.length) parts.push(`office: ${offices.join('; ')}`)
  if (job.is_remote) parts.push(remote.length ? `remote from: ${remote.join(', ')}` : 'remote')
  return parts.join(' | ') || 'not stated'
}

/** The v2 job at a date position, parsed from the in-memory bodies. */
function jobAt(snapshot: LoadedSnapshot, position: number): V2Job {
  return JSON.parse(snapshot.v2Bodies.body(position).toString('utf8')) as V2Job
}

/** Summaries kept per snapshot: a search result is mostly jobs other searches returned too. */
const SUMMARIES_KEPT = 20_000
const summaryCaches = new WeakMap<LoadedSnapshot, LRUCache<number, JobSummary>>()

type JobSummary = ReturnType<typeof summarise>

/**
 * The search result line of the job at `position`. Parsing a whole v2 body
 * (~1.7 KB) for it was most of a search_jobs call's cost; a bounded cache
 * per snapshot keeps the summaries of the jobs searches keep returning.
 */
function summaryAt(snapshot: LoadedSnapshot, position: number): JobSummary {
  let cache = summaryCaches.get(snapshot)
  if (!cache) {
    cache = new LRUCache<number, JobSummary>({ max: SUMMARIES_KEPT })
    summaryCaches.set(snapshot, cache)
  }
  let summary = cache.get(position)
  if (!summary) {
    summary = summarise(jobAt(snapshot, position))
    cache.set(position, summary)
  }
  return summary
}

function summarise(job: V2Job) {
  return {
    slug: job.slug,
    title: job.title,
    company: job.company?.name ?? '',
    company_slug: job.company?.slug ?? '',
    schedule: job.schedule_type,
    is_four_day_week: job.schedule_type && SCHEDULE_TYPES[job.schedule_type].isFourDayWeek,
    work_arrangement: job.work_arrangement,
    locations: locationsText(job),
    salary: formatSalary(job),
    posted_at: job.posted_at,
    url: job.url,
  }
}

/** Refuses values of the open vocabularies (skills, category, country) that would silently match nothing. */
function checkOpenValues(snapshot: LoadedSnapshot, args: z.infer<typeof SearchJobsInput>, now: number): void {
  for (const skill of args.skills ?? []) checkSkill(snapshot, skill, now)
  for (const category of args.category ?? []) checkCategory(snapshot, category, now)
  if (args.country?.trim()) checkCountry(snapshot, args.country)
  for (const country of args.office_country ?? []) if (country.trim()) checkOfficeCountry(snapshot, country, now)
}

/** The v2 list query a search_jobs call means, so both faces answer alike. */
function searchJobsQuery(args: z.infer<typeof SearchJobsInput>): V2ListQuery {
  return {
    ...NO_FILTER,
    page: args.page,
    limit: RESULTS_PER_CALL,
    category: (args.category ?? []).map((v) => v.toLowerCase()),
    level: (args.level ?? []).map((v) => v.toLowerCase()),
    schedule: args.schedule ?? [],
    work_arrangement: args.work_arrangement ?? [],
    skills: (args.skills ?? []).map((v) => v.toLowerCase()),
    country: args.country?.trim() ? [args.country.trim().toLowerCase()] : [],
    office_country: (args.office_country ?? []).map((v) => v.trim().toLowerCase()).filter(Boolean),
    posted_after: args.posted_within_days,
    q: args.query?.trim() || undefined,
    sort: args.sort,
  }
}

/** The ids of the employers whose work-life score is at least `min` (those without one never are). */
function companiesScoringAtLeast(snapshot: LoadedSnapshot, min: number): string[] {
  const { companies } = snapshot
  const ids: string[] = []
  for (let i = 0; i < companies.size; i++) if ((companies.workLifeScore(i) ?? -1) >= min) ids.push(companies.id(i))
  return ids
}

export function searchJobs(
  snapshot: LoadedSnapshot,
  args: z.infer<typeof SearchJobsInput>,
  now: number,
): z.infer<typeof SearchJobsOutput> {
  checkOpenValues(snapshot, args, now)
  const query = searchJobsQuery(args)
  const companyIds =
    // 0 asks for no minimum (as posted_within_days 0 asks for no date limit): employers without a score stay.
    !args.min_work_life_score ? undefined : companiesScoringAtLeast(snapshot, args.min_work_life_score)
  const { total, positions } = runV2Query(
    queryContext(snapshot, now),
    query,
    companyIds ? [['company', companyIds]] : [],
  )
  const hint = total === 0 && query.q ? emptyQueryHint(snapshot, query.q) : undefined
  return {
    total,
    page: args.page,
    has_more: args.page * RESULTS_PER_CALL < total,
    jobs: positions.map((p) => summaryAt(snapshot, p)),
    ...(hint && { hint }),
  }
}

// ---------- get_job ----------

// Slugs come from search results (the server's instructions say so): no description repeats it.
export const GetJobInput = z.strictObject({ slug: z.string().min(1) })
/**
 * The listing exactly as GET /api/v2/jobs/{slug} returns it, whose shape /openapi.yaml
 * documents: not spelt out again here, where every agent pays for tools/list in tokens.
 */
const Listing = z.record(z.string(), z.unknown())

export const GetJobOutput = z.object({
  job: Listing,
  salary: z.string().optional(),
  salary_usd_annual: z.object({ min: z.int().optional(), max: z.int().optional() }).optional(),
  schedule: z.string().optional(),
  is_four_day_week: z.boolean().optional(),
  weekly_hours: z.string().optional(),
  locations: z.string(),
  company_summary: z.string().optional(),
})

/**
 * The job's range in whole US dollars a year, as the salary filters and
 * benchmarks compute it (the snapshot's exchange rates, hour x weekly hours x
 * 52, month x 12), rounded inward so that `salary_min` up to `max` and
 * `salary_max` down to `min` still find the job. Only the bounds the posting
 * publishes: one alone stays a floor or a ceiling.
 */
function usdRange(snapshot: LoadedSnapshot, position: number, job: V2Job): { min?: number; max?: number } | undefined {
  const low = snapshot.jobs.salaryLow[position]!
  if (Number.isNaN(low)) return undefined
  const range: { min?: number; max?: number } = {}
  if (job.salary_min !== undefined) range.min = Math.ceil(low)
  if (job.salary_max !== undefined) range.max = Math.floor(snapshot.jobs.salaryHigh[position]!)
  return range
}

export function getJob(snapshot: LoadedSnapshot, slug: string, now: number): z.infer<typeof GetJobOutput> {
  const position = snapshot.jobs.positionOf(slug)
  if (position === undefined || snapshot.jobs.isExpired(position, now)) {
    throw new ToolError(`No live job has the slug "${slug.slice(0, 200)}". Call search_jobs to find current slugs.`)
  }
  const job = jobAt(snapshot, position)
  const company = snapshot.companies.companyById(snapshot.jobs.valueAt('company', position)!)
  const min = job.hours_per_week_min
  const max = job.hours_per_week_max
  // Without hours of its own, a job on its employer's schedule works the employer's full-time hours; one on
  // another schedule (compressed hours at a four-day-week employer, say) only that schedule's typical hours.
  const onEmployersSchedule = !job.schedule_type || job.schedule_type === company?.schedule_type
  const hours =
    min && max && min !== max
      ? `${min}-${max} hours a week`
      : (max ?? min)
        ? `${max ?? min} hours a week`
        : company?.hours_full_time && onEmployersSchedule
          ? `${company.hours_full_time} hours a week (employer's full-time hours)`
          : job.schedule_type
            ? `about ${SCHEDULE_TYPES[job.schedule_type].typicalWeeklyHours} hours a week (typical of ${job.schedule_type})`
            : undefined
  return {
    job,
    salary: formatSalary(job),
    salary_usd_annual: usdRange(snapshot, position, job),
    schedule: job.schedule_type,
    is_four_day_week: job.schedule_type && SCHEDULE_TYPES[job.schedule_type].isFourDayWeek,
    weekly_hours: hours,
    locations: locationsText(job),
    company_summary: company
      ? `${company.name}: ${SCHEDULE_TYPES[company.schedule_type].label}, ${REMOTE_LEVELS[company.remote_level].label}${company.work_life_score !== undefined ? `, work-life score ${company.work_life_score}/100` : ''}. Call get_company with "${company.slug}" for the profile.`
      : undefined,
  }
}

// ---------- search_companies ----------

export const SearchCompaniesInput = z.strictObject({
  schedule: z.array(scheduleEnum).optional(),
  country: z.string().optional().describe('HQ country: name or ISO code.'),
  remote_level: z
    .array(closedEnum(REMOTE_LEVEL_VALUES))
    .optional()
    .describe('fully_remote: no office; remote_friendly: remote or hybrid.'),
  hires_worldwide: z.boolean().optional(),
  query: searchText(100).describe('Name or tagline word prefixes.'),
  page,
})
const CompanySummary = z.object({
  slug: z.string(),
  name: z.string(),
  schedule: z.string(),
  is_four_day_week: z.boolean(),
  hours_full_time: z.int().optional(),
  remote_level: z.string(),
  hires_worldwide: z.boolean(),
  country: z.string().optional(),
  work_life_score: z.int().optional(),
  live_jobs: z.int(),
})
export const SearchCompaniesOutput = z.object({
  total: z.int(),
  page: z.int(),
  has_more: z.boolean(),
  companies: z.array(CompanySummary),
})

function companySummary(c: IndexedCompany, liveJobs: number): z.infer<typeof CompanySummary> {
  return {
    slug: c.slug,
    name: c.name,
    schedule: c.schedule_type,
    is_four_day_week: SCHEDULE_TYPES[c.schedule_type].isFourDayWeek,
    hours_full_time: c.hours_full_time,
    remote_level: c.remote_level,
    hires_worldwide: c.hires_worldwide,
    country: c.country,
    work_life_score: c.work_life_score,
    live_jobs: liveJobs,
  }
}

/**
 * The REST companies query (GET /api/v2/companies?sort=jobs) with the tool's
 * arguments: the same matching (query words begin words of the name or
 * one-line description), the same order, only employers with a live job.
 */
export function searchCompanies(
  snapshot: LoadedSnapshot,
  args: z.infer<typeof SearchCompaniesInput>,
  now: number,
): z.infer<typeof SearchCompaniesOutput> {
  const country = args.country?.trim()
  const liveJobs = liveJobsByCompany(snapshot, now)
  if (country) checkHeadquartersCountry(snapshot, country, liveJobs)
  const { total, page } = runCompanyQuery(snapshot.companies, liveJobs, {
    page: args.page,
    limit: RESULTS_PER_CALL,
    q: args.query?.trim() || undefined,
    country: country ? [country] : [],
    schedule: args.schedule ?? [],
    remote_level: args.remote_level ?? [],
    hires_worldwide: args.hires_worldwide,
    sort: 'jobs',
  })
  return {
    total,
    page: args.page,
    has_more: args.page * RESULTS_PER_CALL < total,
    companies: page.map(({ company, liveJobs }) => companySummary(company, liveJobs)),
  }
}

// ---------- get_company ----------

export const GetCompanyInput = z.strictObject({
  slug: z.string().min(1),
})
/**
 * The profile GET /api/v2/companies/{slug} serves (every field, same values: one function makes
 * both), with the schedule as facts (`schedule` in place of schedule_type and schedule_policy_text)
 * and `office_policy`, the remote level in words.
 */
export const GetCompanyOutput = z.object({
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  url: z.string(),
  website: z.string().optional(),
  logo_url: z.string().optional(),
  short_description: z.string().optional(),
  category: z.string().optional(),
  description: z.string().optional(),
  country: z.string().optional(),
  employees: z.int().optional(),
  schedule: ScheduleFacts.extend({
    label: z.string(),
    definition: z.string(),
    policy_text: z.string().optional(),
  }),
  hours_full_time: z.int().optional(),
  remote_level: z.string(),
  office_policy: z.string(),
  hires_worldwide: z.boolean(),
  benefits: z.array(z.string()),
  work_life_score: z.int().optional(),
  day_off: z.string().optional(),
  vacation_days: z.int().optional(),
  awards: z.array(z.string()).optional(),
  live_jobs: z.int(),
  jobs_url: z.string(),
})

export function getCompany(snapshot: LoadedSnapshot, slug: string, now: number): z.infer<typeof GetCompanyOutput> {
  // An employer whose last job closed or expired is gone, as from /api/v2/companies/{slug}.
  const c = snapshot.companies.companyBySlug(slug)
  const liveJobs = c ? (liveJobsByCompany(snapshot, now).get(c.id) ?? 0) : 0
  if (!c || liveJobs === 0)
    throw new ToolError(
      `No employer with a live job has the slug "${slug.slice(0, 200)}". Call search_companies to find employer slugs.`,
    )
  const { schedule_type, schedule_policy_text, ...profile } = toV2CompanyProfile(c, liveJobs)
  const s = SCHEDULE_TYPES[schedule_type]
  return compact({
    ...profile,
    schedule: compact({
      ...scheduleFacts(schedule_type)!,
      label: s.label,
      definition: s.definition,
      policy_text: schedule_policy_text,
    }),
    office_policy: REMOTE_LEVELS[c.remote_level].label,
    benefits: profile.benefits ?? [],
  })
}

// ---------- explain_schedule_type ----------

export const ExplainScheduleInput = z.strictObject({
  schedule_type: scheduleEnum.optional(),
})
export const ExplainScheduleOutput = z.object({
  schedule_types: z.array(
    ScheduleFacts.extend({ label: z.string(), definition: z.string(), typical_weekly_hours: z.int() }),
  ),
  note: z.string(),
})

export function explainSchedule(args: z.infer<typeof ExplainScheduleInput>): z.infer<typeof ExplainScheduleOutput> {
  const types = args.schedule_type ? [args.schedule_type] : SCHEDULE_TYPE_VALUES
  return {
    schedule_types: types.map((type) => ({
      ...scheduleFacts(type)!,
      label: SCHEDULE_TYPES[type].label,
      definition: SCHEDULE_TYPES[type].definition,
      typical_weekly_hours: SCHEDULE_TYPES[type].typicalWeeklyHours,
    })),
    note: FOUR_DAY_RULE,
  }
}

// ---------- registry ----------

export const TOOL_DESCRIPTIONS = {
  search_jobs: `Live jobs; filters AND, list values OR; ${RESULTS_PER_CALL} a page. ${SCHEDULE_LINE} ${FOUR_DAY_RULE}`,
  get_job:
    'Live job by slug: REST listing, readable salary, salary_usd_annual (as filters convert), hours, schedule, employer.',
  search_companies: `Employers by schedule, HQ country, office policy, worldwide hiring; busiest first, ${RESULTS_PER_CALL} a page.`,
  get_company: 'Employer by slug: REST profile; schedule, office policy explained.',
  get_market_stats:
    'Shares (0-1) of employers by schedule, true 4-day weeks, remote jobs; median hours; exports. Pass on date, caveats.',
  list_filters: 'Values each search_jobs filter takes, with live counts.',
  get_salary_benchmarks:
    'USD/year salary percentiles of live jobs by category, level, country, schedule; group_by splits. Pass on dates, caveats.',
  explain_schedule_type: 'Each schedule type: hours, pay, four-day week or not.',
} as const

export { marketStats, MarketStatsSchema }
