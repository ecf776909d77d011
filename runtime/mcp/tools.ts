/**
 * The six read-only MCP tools. Each is a zod input schema, a zod output
 * schema and a pure function over a loaded snapshot, so the tools can be
 * tested without a server and cannot drift from the REST matching rules
 * (search_jobs runs the same query engine as GET /api/v2/jobs).
 */
import { LRUCache } from 'lru-cache'
import { z } from 'zod'
import { resolveCountry } from '../../core/geo.ts'
import type { V2ListQuery } from '../../core/query.ts'
import { formatSalary } from '../../core/salary.ts'
import type { V2Job } from '../../core/schema/api.ts'
import { V2Job as V2JobSchema } from '../../core/schema/api.ts'
import type { IndexedCompany } from '../../core/snapshot.ts'
import {
  REMOTE_LEVELS,
  REMOTE_LEVEL_VALUES,
  SCHEDULE_TYPES,
  SCHEDULE_TYPE_VALUES,
  WORK_ARRANGEMENTS,
  type ScheduleType,
} from '../../core/taxonomy.ts'
import { runV2Query } from '../query/run-query.ts'
import type { LoadedSnapshot } from '../snapshot.ts'
import { liveJobsByCompany } from './live-jobs.ts'
import { marketStats, MarketStatsSchema } from './market-stats.ts'

const RESULTS_PER_CALL = 25
const MAX_PAGE = 200

/** One line per schedule type, for tool descriptions: the taxonomy models must follow. */
const SCHEDULE_TAXONOMY_TEXT = SCHEDULE_TYPE_VALUES.map((type) => {
  const s = SCHEDULE_TYPES[type]
  return `- ${type} ("${s.label}"): ${s.reducesHours ? 'reduces weekly hours' : 'does NOT reduce weekly hours'}, ${s.fullPay ? 'full pay' : 'pay reduced pro rata'}${s.isFourDayWeek ? '; a true four-day week' : ''}.`
}).join('\n')

const FOUR_DAY_RULE =
  'Only 4_day_week is a four-day week. compressed_hours (the same ~40 hours in four longer days) is never a four-day week; do not describe it as one.'

const page = z
  .int()
  .min(1, 'page must be at least 1')
  .max(MAX_PAGE, `page must be at most ${MAX_PAGE}; narrow the filters instead of paging further`)
  .default(1)
  .describe(
    `Page of results, 1 to ${MAX_PAGE}. Each page holds at most ${RESULTS_PER_CALL}; keep paging while has_more is true.`,
  )

const scheduleEnum = z.enum(SCHEDULE_TYPE_VALUES)

function scheduleFacts(type: ScheduleType | undefined) {
  if (!type) return undefined
  const s = SCHEDULE_TYPES[type]
  return { type, label: s.label, reduces_hours: s.reducesHours, full_pay: s.fullPay, is_four_day_week: s.isFourDayWeek }
}
const ScheduleFacts = z.object({
  type: scheduleEnum,
  label: z.string(),
  reduces_hours: z.boolean(),
  full_pay: z.boolean(),
  is_four_day_week: z.boolean().describe('True only for a real four-day week with fewer hours (4_day_week).'),
})

// ---------- search_jobs ----------

export const SearchJobsInput = z.object({
  query: z
    .string()
    .max(200)
    .optional()
    .describe(
      'Free text over title, role, company, skills, locations and description. Every word must match (prefixes allowed).',
    ),
  schedule: z.array(scheduleEnum).optional().describe('Schedule types; a job matches any of them.'),
  category: z
    .array(z.string())
    .optional()
    .describe(
      'Category slugs such as engineering, data, design, product, marketing, sales, customer-success, operations, finance, people.',
    ),
  level: z.array(z.string()).optional().describe('Seniority: intern, junior, mid, senior, lead, principal, director.'),
  skills: z.array(z.string()).optional().describe('Skill, stack or tool slugs such as python, go, react, figma.'),
  country: z
    .string()
    .optional()
    .describe(
      'Country name or ISO code (e.g. "Germany" or "DE"): offices there, or remote work allowed from there (directly, via its continent or region, or worldwide).',
    ),
  work_arrangement: z.array(z.enum(WORK_ARRANGEMENTS)).optional().describe('onsite, hybrid and/or remote.'),
  min_work_life_score: z
    .int()
    .min(0)
    .max(100)
    .optional()
    .describe('Only employers whose work-life score (0-100) is at least this.'),
  posted_within_days: z.int().min(1).max(365).optional().describe('Only jobs posted in the last N days (1-365).'),
  sort: z
    .enum(['date', 'salary'])
    .default('date')
    .describe('date: newest first. salary: highest annualised USD salary first.'),
  page,
})

const JobSummary = z.object({
  slug: z.string().describe('Pass to get_job for the full listing.'),
  title: z.string(),
  company: z.string(),
  company_slug: z.string().describe('Pass to get_company for the employer profile.'),
  schedule: ScheduleFacts.optional(),
  work_arrangement: z.enum(WORK_ARRANGEMENTS),
  locations: z.string().describe('Offices and where remote work is allowed, as text.'),
  salary: z.string().optional().describe('Published salary, readable, in its own currency.'),
  posted_at: z.string(),
  url: z.string(),
})

export const SearchJobsOutput = z.object({
  total: z.int(),
  page: z.int(),
  has_more: z.boolean(),
  jobs: z.array(JobSummary),
})

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
    schedule: scheduleFacts(job.schedule_type),
    work_arrangement: job.work_arrangement,
    locations: locationsText(job),
    salary: formatSalary(job),
    posted_at: job.posted_at,
    url: job.url,
  }
}

/** The v2 list query a search_jobs call means, so both faces answer alike. */
function searchJobsQuery(args: z.infer<typeof SearchJobsInput>): V2ListQuery {
  return {
    page: args.page,
    limit: RESULTS_PER_CALL,
    category: (args.category ?? []).map((v) => v.toLowerCase()),
    level: (args.level ?? []).map((v) => v.toLowerCase()),
    schedule: args.schedule ?? [],
    work_arrangement: args.work_arrangement ?? [],
    skills: (args.skills ?? []).map((v) => v.toLowerCase()),
    country: args.country?.trim() ? [args.country.trim().toLowerCase()] : [],
    posted_after: args.posted_within_days,
    q: args.query?.trim() || undefined,
    sort: args.sort,
  }
}

export function searchJobs(
  snapshot: LoadedSnapshot,
  args: z.infer<typeof SearchJobsInput>,
  now: number,
): z.infer<typeof SearchJobsOutput> {
  const query = searchJobsQuery(args)
  const companyIds =
    args.min_work_life_score === undefined
      ? undefined
      : snapshot.companies.filter((c) => (c.work_life_score ?? -1) >= args.min_work_life_score!).map((c) => c.id)
  const { total, positions } = runV2Query(
    { index: snapshot.jobs, text: snapshot.text, now },
    query,
    companyIds ? [['company', companyIds]] : [],
  )
  return {
    total,
    page: args.page,
    has_more: args.page * RESULTS_PER_CALL < total,
    jobs: positions.map((p) => summaryAt(snapshot, p)),
  }
}

export function renderSearchJobs(result: z.infer<typeof SearchJobsOutput>): string {
  if (result.total === 0) return 'No live jobs match. Try fewer filters, or explain_schedule_type for schedule names.'
  const lines = result.jobs.map(
    (j, i) =>
      `${(result.page - 1) * RESULTS_PER_CALL + i + 1}. ${j.title} at ${j.company} (slug: ${j.slug}) | ${j.schedule?.label ?? 'schedule not stated'} | ${j.work_arrangement} | ${j.locations}${j.salary ? ` | ${j.salary}` : ''} | posted ${j.posted_at.slice(0, 10)}`,
  )
  return `${result.total} matching jobs; page ${result.page}${result.has_more ? ` (more: call again with page ${result.page + 1})` : ' (last page)'}.\n${lines.join('\n')}`
}

// ---------- get_job ----------

export const GetJobInput = z.object({ slug: z.string().min(1).max(200).describe('Job slug from search_jobs.') })
export const GetJobOutput = z.object({
  job: V2JobSchema.describe(
    'The listing exactly as GET /api/v2/jobs/{slug} returns it (salaries in the smallest currency unit).',
  ),
  salary: z.string().optional().describe('The published salary, readable, e.g. "€60,000 - €75,000 a year".'),
  schedule: ScheduleFacts.optional(),
  weekly_hours: z
    .string()
    .optional()
    .describe('Weekly hours as published by the job, or the employer full-time hours.'),
  locations: z.string(),
  company_summary: z.string().optional(),
})

class ToolError extends Error {}

export function getJob(snapshot: LoadedSnapshot, slug: string, now: number): z.infer<typeof GetJobOutput> {
  const position = snapshot.jobs.positionOf(slug)
  if (position === undefined || snapshot.jobs.isExpired(position, now)) {
    throw new ToolError(`No live job has the slug "${slug}". Call search_jobs to find current slugs.`)
  }
  const job = jobAt(snapshot, position)
  const company = snapshot.companyById.get(snapshot.jobs.valueAt('company', position)!)
  const min = job.hours_per_week_min
  const max = job.hours_per_week_max
  const hours =
    min && max && min !== max
      ? `${min}-${max} hours a week`
      : (max ?? min)
        ? `${max ?? min} hours a week`
        : company?.hours_full_time
          ? `${company.hours_full_time} hours a week (employer's full-time hours)`
          : undefined
  return {
    job,
    salary: formatSalary(job),
    schedule: scheduleFacts(job.schedule_type),
    weekly_hours: hours,
    locations: locationsText(job),
    company_summary: company
      ? `${company.name}: ${SCHEDULE_TYPES[company.schedule_type].label}, ${REMOTE_LEVELS[company.remote_level].label}${company.work_life_score !== undefined ? `, work-life score ${company.work_life_score}/100` : ''}. Call get_company with "${company.slug}" for the profile.`
      : undefined,
  }
}

export function renderGetJob(result: z.infer<typeof GetJobOutput>): string {
  const { job } = result
  return [
    `${job.title} at ${job.company?.name ?? 'unknown company'} (${job.slug})`,
    `Schedule: ${result.schedule ? `${result.schedule.label} (${result.schedule.reduces_hours ? 'fewer hours' : 'same hours'}, ${result.schedule.full_pay ? 'full pay' : 'pro-rata pay'})` : 'not stated'}`,
    result.weekly_hours ? `Hours: ${result.weekly_hours}` : undefined,
    `Work arrangement: ${job.work_arrangement}; ${result.locations}`,
    `Salary: ${result.salary ?? 'not published'}`,
    `Posted: ${job.posted_at}${job.expires_at ? `; expires ${job.expires_at}` : ''}`,
    `Apply / details: ${job.url}`,
    result.company_summary,
    job.description ? `\n${job.description}` : undefined,
  ]
    .filter((line) => line !== undefined)
    .join('\n')
}

// ---------- search_companies ----------

export const SearchCompaniesInput = z.object({
  schedule: z.array(scheduleEnum).optional().describe('Working-hours policies; an employer matches any of them.'),
  country: z.string().optional().describe('Headquarters country, name or ISO code.'),
  remote_level: z
    .array(z.enum(REMOTE_LEVEL_VALUES))
    .optional()
    .describe(
      'Office-presence policy: fully_remote (no office needed), remote_friendly (offers remote/hybrid), onsite.',
    ),
  hires_worldwide: z.boolean().optional().describe('true: only employers that hire from anywhere in the world.'),
  query: z.string().max(100).optional().describe('Part of the company name.'),
  page,
})
const CompanySummary = z.object({
  slug: z.string().describe('Pass to get_company.'),
  name: z.string(),
  schedule: ScheduleFacts,
  hours_full_time: z.int().optional(),
  remote_level: z.enum(REMOTE_LEVEL_VALUES),
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
    schedule: scheduleFacts(c.schedule_type)!,
    hours_full_time: c.hours_full_time,
    remote_level: c.remote_level,
    hires_worldwide: c.hires_worldwide,
    country: c.country,
    work_life_score: c.work_life_score,
    live_jobs: liveJobs,
  }
}

export function searchCompanies(
  snapshot: LoadedSnapshot,
  args: z.infer<typeof SearchCompaniesInput>,
  now: number,
): z.infer<typeof SearchCompaniesOutput> {
  const live = liveJobsByCompany(snapshot, now)
  const liveJobs = (c: IndexedCompany) => live.get(c.id) ?? 0
  const country = args.country?.trim() ? (resolveCountry(args.country) ?? null) : undefined
  const name = args.query?.trim().toLowerCase()
  const matches = snapshot.companies
    .filter((c) => {
      if (args.schedule?.length && !args.schedule.includes(c.schedule_type)) return false
      if (args.remote_level?.length && !args.remote_level.includes(c.remote_level)) return false
      if (args.hires_worldwide !== undefined && c.hires_worldwide !== args.hires_worldwide) return false
      if (country !== undefined && (country === null || !c.country || resolveCountry(c.country) !== country))
        return false
      if (name && !c.name.toLowerCase().includes(name)) return false
      return true
    })
    .sort((a, b) => liveJobs(b) - liveJobs(a) || a.name.localeCompare(b.name))
  const start = (args.page - 1) * RESULTS_PER_CALL
  return {
    total: matches.length,
    page: args.page,
    has_more: start + RESULTS_PER_CALL < matches.length,
    companies: matches.slice(start, start + RESULTS_PER_CALL).map((c) => companySummary(c, liveJobs(c))),
  }
}

export function renderSearchCompanies(result: z.infer<typeof SearchCompaniesOutput>): string {
  if (result.total === 0) return 'No employers match. Try fewer filters.'
  const lines = result.companies.map(
    (c) =>
      `- ${c.name} (slug: ${c.slug}) | ${c.schedule.label}${c.hours_full_time ? `, ${c.hours_full_time} h/week` : ''} | ${REMOTE_LEVELS[c.remote_level].label}${c.hires_worldwide ? ', hires worldwide' : ''} | ${c.country ?? 'country not stated'}${c.work_life_score !== undefined ? ` | work-life ${c.work_life_score}/100` : ''} | ${c.live_jobs} live jobs`,
  )
  return `${result.total} employers; page ${result.page}${result.has_more ? ` (more: page ${result.page + 1})` : ' (last page)'}.\n${lines.join('\n')}`
}

// ---------- get_company ----------

export const GetCompanyInput = z.object({
  slug: z.string().min(1).max(200).describe('Company slug from search_companies or a job.'),
})
export const GetCompanyOutput = z.object({
  slug: z.string(),
  name: z.string(),
  url: z.string(),
  website: z.string().optional(),
  short_description: z.string().optional(),
  description: z.string().optional(),
  country: z.string().optional(),
  employees: z.int().optional(),
  schedule: ScheduleFacts.extend({
    definition: z.string(),
    policy_text: z.string().optional().describe("The employer's own words."),
  }),
  hours_full_time: z.int().optional(),
  office_policy: z.object({
    remote_level: z.enum(REMOTE_LEVEL_VALUES),
    label: z.string(),
    hires_worldwide: z.boolean(),
  }),
  benefits: z.array(z.string()),
  work_life_score: z.int().optional(),
  day_off: z.string().optional().describe('Only when the employer published it.'),
  vacation_days: z.int().optional().describe('Only when the employer published it.'),
  awards: z.array(z.string()).optional().describe('Only when the employer published them.'),
  live_jobs: z.int(),
})

export function getCompany(snapshot: LoadedSnapshot, slug: string, now: number): z.infer<typeof GetCompanyOutput> {
  const c = snapshot.companies.find((company) => company.slug === slug)
  if (!c) throw new ToolError(`No employer has the slug "${slug}". Call search_companies to find employer slugs.`)
  const s = SCHEDULE_TYPES[c.schedule_type]
  const out: z.infer<typeof GetCompanyOutput> = {
    slug: c.slug,
    name: c.name,
    url: c.url,
    website: c.website,
    short_description: c.short_description,
    description: c.description,
    country: c.country,
    employees: c.employees,
    schedule: { ...scheduleFacts(c.schedule_type)!, definition: s.definition, policy_text: c.schedule_policy_text },
    hours_full_time: c.hours_full_time,
    office_policy: {
      remote_level: c.remote_level,
      label: REMOTE_LEVELS[c.remote_level].label,
      hires_worldwide: c.hires_worldwide,
    },
    benefits: c.benefits,
    work_life_score: c.work_life_score,
    day_off: c.day_off,
    vacation_days: c.vacation_days,
    awards: c.awards,
    live_jobs: liveJobsByCompany(snapshot, now).get(c.id) ?? 0,
  }
  for (const key of Object.keys(out) as (keyof typeof out)[]) if (out[key] === undefined) delete out[key]
  return out
}

export function renderGetCompany(c: z.infer<typeof GetCompanyOutput>): string {
  return [
    `${c.name} (${c.slug})${c.country ? `, ${c.country}` : ''}${c.employees ? `, ${c.employees} employees` : ''}`,
    c.short_description,
    `Schedule: ${c.schedule.label} (${c.schedule.reduces_hours ? 'fewer hours' : 'same hours'}, ${c.schedule.full_pay ? 'full pay' : 'pro-rata pay'})${c.hours_full_time ? `, ${c.hours_full_time} hours a week full time` : ''}`,
    c.schedule.policy_text ? `In their words: ${c.schedule.policy_text}` : undefined,
    `Office policy: ${c.office_policy.label}${c.office_policy.hires_worldwide ? '; hires worldwide' : ''}`,
    c.benefits.length ? `Benefits: ${c.benefits.join(', ')}` : undefined,
    c.work_life_score !== undefined ? `Work-life score: ${c.work_life_score}/100` : undefined,
    c.day_off ? `Day off: ${c.day_off}` : undefined,
    c.vacation_days !== undefined ? `Vacation: ${c.vacation_days} days` : undefined,
    c.awards?.length ? `Awards: ${c.awards.join(', ')}` : undefined,
    `${c.live_jobs} live jobs (search_jobs with the query "${c.name}" lists them). Profile: ${c.url}`,
  ]
    .filter(Boolean)
    .join('\n')
}

// ---------- explain_schedule_type ----------

export const ExplainScheduleInput = z.object({
  schedule_type: scheduleEnum.optional().describe('One schedule type; omit to get all of them.'),
})
export const ExplainScheduleOutput = z.object({
  schedule_types: z.array(ScheduleFacts.extend({ definition: z.string(), typical_weekly_hours: z.int() })),
  note: z.string(),
})

export function explainSchedule(args: z.infer<typeof ExplainScheduleInput>): z.infer<typeof ExplainScheduleOutput> {
  const types = args.schedule_type ? [args.schedule_type] : SCHEDULE_TYPE_VALUES
  return {
    schedule_types: types.map((type) => ({
      ...scheduleFacts(type)!,
      definition: SCHEDULE_TYPES[type].definition,
      typical_weekly_hours: SCHEDULE_TYPES[type].typicalWeeklyHours,
    })),
    note: FOUR_DAY_RULE,
  }
}

export function renderExplainSchedule(result: z.infer<typeof ExplainScheduleOutput>): string {
  return `${result.schedule_types.map((s) => `${s.type} ("${s.label}"): ${s.definition} Reduces hours: ${s.reduces_hours ? 'yes' : 'no'}. Full pay: ${s.full_pay ? 'yes' : 'no'}. Typical: ${s.typical_weekly_hours} h/week.`).join('\n')}\n${result.note}`
}

// ---------- registry ----------

export const TOOL_DESCRIPTIONS = {
  search_jobs: `Search live job listings. Filters combine with AND; list filters match any of their values. Returns at most ${RESULTS_PER_CALL} jobs per call with total and has_more; page up to ${MAX_PAGE}. Use get_job with a slug for the full listing.\nSchedule types:\n${SCHEDULE_TAXONOMY_TEXT}\n${FOUR_DAY_RULE}`,
  get_job:
    'One live listing in full by slug: description, weekly hours, schedule, locations, the published salary (readable and in smallest currency units) and a company summary. Unknown or expired slugs return an error telling you to use search_jobs.',
  search_companies: `Search employers by working-hours policy (schedule type), headquarters country, office-presence policy and whether they hire worldwide. At most ${RESULTS_PER_CALL} per call, page up to ${MAX_PAGE}.\nSchedule types:\n${SCHEDULE_TAXONOMY_TEXT}`,
  get_company:
    "One employer's full profile: schedule policy and its own text, full-time weekly hours, office policy, benefits, work-life score, and day off, vacation days and awards only where the employer published them (absent otherwise, never guessed).",
  get_market_stats:
    'Aggregate market data across the tracked employers and live jobs: share of employers by schedule type, true four-day-week share, median full-time weekly hours, salary ranges (annualised USD) by category and level, and remote share, with the data as-of date and caveats that must be passed on to the user.',
  explain_schedule_type: `Definitions of the schedule types: whether each truly reduces weekly hours and whether at full pay. ${FOUR_DAY_RULE}`,
} as const

export { marketStats, MarketStatsSchema }
