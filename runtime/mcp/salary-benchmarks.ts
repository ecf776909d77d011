/**
 * get_salary_benchmarks: salary percentiles over the live jobs that match a
 * few filters, overall and split by one of them. The matching runs through
 * the v2 list's query engine, so "category=data, country=DE" means here what
 * it means on GET /api/v2/jobs. Results are kept per snapshot and arguments
 * until another job expires: agents ask the same few questions again.
 */
import { LRUCache } from 'lru-cache'
import { z } from 'zod'
import { NO_FILTER, type V2ListQuery } from '../../core/query.ts'
import { LEVEL_LABELS, SCHEDULE_TYPE_VALUES } from '../../core/taxonomy.ts'
import { runV2Query } from '../query/run-query.ts'
import { queryContext, type LoadedSnapshot } from '../snapshot/load.ts'
import { closedEnum } from './closed-enum.ts'
import { quantile } from './quantile.ts'
import { checkCategory, checkCountry } from './suggest.ts'

/** Below this many salaries a percentile says more about one employer than about a market. */
const MIN_SAMPLE = 5
/** Groups listed at most, largest samples first (there are ~100 countries). */
const MAX_GROUPS = 30

const GROUPINGS = ['category', 'level', 'country', 'schedule'] as const
type Grouping = (typeof GROUPINGS)[number]

export const SalaryBenchmarksInput = z.strictObject({
  category: z.string().optional(),
  level: closedEnum(Object.keys(LEVEL_LABELS) as [string, ...string[]]).optional(),
  country: z.string().optional().describe('Name or ISO code.'),
  schedule: closedEnum(SCHEDULE_TYPE_VALUES).optional(),
  group_by: closedEnum(GROUPINGS).optional(),
})
type SalaryBenchmarksArgs = z.infer<typeof SalaryBenchmarksInput>

const Percentiles = z
  .object({
    jobs_with_salary: z.int(),
    p10: z.int().optional(),
    p25: z.int().optional(),
    median: z.int().optional(),
    p75: z.int().optional(),
    p90: z.int().optional(),
  })
  .describe(`Annual USD; percentiles only from ${MIN_SAMPLE} salaries up.`)
  .meta({ title: 'Percentiles' })
type Percentiles = z.infer<typeof Percentiles>

export const SalaryBenchmarksOutput = z.object({
  as_of: z.string(),
  exchange_rates_as_of: z.string(),
  live_jobs_matched: z.int(),
  salary: Percentiles,
  groups: z.record(z.string(), Percentiles).optional(),
  caveats: z.array(z.string()),
})
type SalaryBenchmarks = z.infer<typeof SalaryBenchmarksOutput>

const CAVEATS = [
  'Each salary is the midpoint of the range a job publishes, converted to USD at the exchange rates dated above; hourly pay is annualised as hour x weekly hours (40 when unstated) x 52, monthly as month x 12.',
  'Only live jobs that publish a salary count; employers tracked by jobsnap are not a random sample of the labour market.',
  `A country counts the jobs with an office there or open to remote work from there (continent, region or worldwide included), so remote jobs appear under many countries. Groups with fewer than ${MIN_SAMPLE} salaries show only their count; at most ${MAX_GROUPS} groups are listed.`,
]

function queryFor(args: SalaryBenchmarksArgs): V2ListQuery {
  return {
    ...NO_FILTER,
    category: args.category ? [args.category.trim().toLowerCase()] : [],
    level: args.level ? [args.level] : [],
    country: args.country?.trim() ? [args.country.trim().toLowerCase()] : [],
    schedule: args.schedule ? [args.schedule] : [],
  }
}

/** Percentiles of the published salaries among the jobs `query` matches. */
function percentilesOf(
  snapshot: LoadedSnapshot,
  query: V2ListQuery,
  now: number,
): { matched: number; salary: Percentiles } {
  const index = snapshot.jobs
  const context = queryContext(snapshot, now)
  // One page as long as the snapshot: every match, in date order.
  const { total, positions } = runV2Query(context, { ...query, limit: Math.max(index.size, 1) })
  const salaries: number[] = []
  for (const p of positions) {
    const low = index.salaryLow[p]!
    if (!Number.isNaN(low)) salaries.push((low + index.salaryHigh[p]!) / 2)
  }
  const sorted = Float64Array.from(salaries).sort()
  if (sorted.length < MIN_SAMPLE) return { matched: total, salary: { jobs_with_salary: sorted.length } }
  const at = (q: number) => Math.round(quantile(sorted, q))
  return {
    matched: total,
    salary: {
      jobs_with_salary: sorted.length,
      p10: at(0.1),
      p25: at(0.25),
      median: at(0.5),
      p75: at(0.75),
      p90: at(0.9),
    },
  }
}

/** The values a grouping splits by: the one its filter names, or every value some job has. */
function groupValues(snapshot: LoadedSnapshot, grouping: Grouping, query: V2ListQuery): string[] {
  const filtered = query[grouping]
  if (filtered.length) return filtered
  if (grouping === 'schedule') return [...SCHEDULE_TYPE_VALUES]
  if (grouping === 'country') return snapshot.jobs.countriesNamed()
  return snapshot.jobs.valuesOf(grouping)
}

function benchmarks(snapshot: LoadedSnapshot, args: SalaryBenchmarksArgs, now: number): SalaryBenchmarks {
  if (args.category) checkCategory(snapshot, args.category, now)
  if (args.country?.trim()) checkCountry(snapshot, args.country)
  const query = queryFor(args)
  const { matched, salary } = percentilesOf(snapshot, query, now)
  const grouping = args.group_by
  const groups = grouping
    ? groupValues(snapshot, grouping, query)
        .map((value) => ({ value, ...percentilesOf(snapshot, { ...query, [grouping]: [value] }, now) }))
        .filter((group) => group.salary.jobs_with_salary > 0)
        .sort((a, b) => b.salary.jobs_with_salary - a.salary.jobs_with_salary || a.value.localeCompare(b.value))
        .slice(0, MAX_GROUPS)
    : undefined
  return {
    as_of: snapshot.manifest.built_at,
    exchange_rates_as_of: snapshot.manifest.rates_as_of,
    live_jobs_matched: matched,
    salary,
    ...(groups && { groups: Object.fromEntries(groups.map((group) => [group.value, group.salary])) }),
    // Last, so a reader of the text block meets them after the figures.
    caveats: CAVEATS,
  }
}

const cache = new WeakMap<LoadedSnapshot, LRUCache<string, SalaryBenchmarks>>()

/** The benchmarks for `args`, from the cache while no further job has expired. */
export function salaryBenchmarks(snapshot: LoadedSnapshot, args: SalaryBenchmarksArgs, now: number): SalaryBenchmarks {
  let results = cache.get(snapshot)
  if (!results) {
    results = new LRUCache<string, SalaryBenchmarks>({ max: 500 })
    cache.set(snapshot, results)
  }
  const key = `${snapshot.jobs.expiredCount(now)}|${JSON.stringify(args)}`
  let result = results.get(key)
  if (!result) {
    result = benchmarks(snapshot, args, now)
    results.set(key, result)
  }
  return result
}
