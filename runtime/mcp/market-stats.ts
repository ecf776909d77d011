/**
 * get_market_stats: aggregates over one snapshot's live jobs, computed once
 * per snapshot and again only when another job has expired since
 * (memoizeUntilExpiry: an expired job is never counted).
 */
import { z } from 'zod'
import { SCHEDULE_TYPES, SCHEDULE_TYPE_VALUES } from '../../core/taxonomy.ts'
import type { LoadedSnapshot } from '../snapshot.ts'
import { memoizeUntilExpiry } from './live-jobs.ts'

const Range = z
  .object({
    jobs_with_salary: z.int(),
    p25_usd: z.int(),
    median_usd: z.int(),
    p75_usd: z.int(),
  })
  .meta({ title: 'SalaryRange' })

export const MarketStatsSchema = z.object({
  as_of: z.string(),
  exchange_rates_as_of: z.string(),
  employers_tracked: z.int(),
  live_jobs: z.int(),
  employers_by_schedule: z.array(
    z.object({ schedule_type: z.string(), label: z.string(), employers: z.int(), share: z.number() }),
  ),
  true_four_day_week_employer_share: z.number().describe('4_day_week only; compressed hours excluded.'),
  median_full_time_weekly_hours: z.number().optional(),
  remote_share_of_jobs: z.record(z.string(), z.number()),
  salary_by_category: z.record(z.string(), Range).describe('Annual USD, top of each published range.'),
  salary_by_level: z.record(z.string(), Range),
  caveats: z.array(z.string()),
})
export type MarketStats = z.infer<typeof MarketStatsSchema>

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0
  const position = (sorted.length - 1) * q
  const lower = Math.floor(position)
  const upper = Math.ceil(position)
  return sorted[lower]! + (sorted[upper]! - sorted[lower]!) * (position - lower)
}

function ranges(groups: Map<string, number[]>): Record<string, z.infer<typeof Range>> {
  const out: Record<string, z.infer<typeof Range>> = {}
  for (const [key, values] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    const sorted = values.sort((a, b) => a - b)
    out[key] = {
      jobs_with_salary: sorted.length,
      p25_usd: Math.round(quantile(sorted, 0.25)),
      median_usd: Math.round(quantile(sorted, 0.5)),
      p75_usd: Math.round(quantile(sorted, 0.75)),
    }
  }
  return out
}

export const marketStats = memoizeUntilExpiry((snapshot: LoadedSnapshot, live: number[]): MarketStats => {
  const companies = snapshot.companies
  const bySchedule = SCHEDULE_TYPE_VALUES.map((type) => {
    const employers = companies.filter((c) => c.schedule_type === type).length
    return {
      schedule_type: type,
      label: SCHEDULE_TYPES[type].label,
      employers,
      share: companies.length ? round(employers / companies.length) : 0,
    }
  })
  const hours = companies
    .map((c) => c.hours_full_time)
    .filter((h): h is number => h !== undefined)
    .sort((a, b) => a - b)
  const arrangement = { remote: 0, hybrid: 0, onsite: 0 }
  const byCategory = new Map<string, number[]>()
  const byLevel = new Map<string, number[]>()
  const index = snapshot.jobs
  for (const position of live) {
    arrangement[index.valueAt('work_arrangement', position) as keyof typeof arrangement]++
    const salary = index.salaryHigh[position]!
    if (Number.isNaN(salary)) continue
    const category = index.valueAt('category', position)
    const level = index.valueAt('level', position)
    if (category) (byCategory.get(category) ?? byCategory.set(category, []).get(category)!).push(salary)
    if (level) (byLevel.get(level) ?? byLevel.set(level, []).get(level)!).push(salary)
  }
  const total = live.length || 1
  const stats: MarketStats = {
    as_of: snapshot.manifest.built_at,
    exchange_rates_as_of: snapshot.manifest.rates_as_of,
    employers_tracked: companies.length,
    live_jobs: live.length,
    employers_by_schedule: bySchedule,
    true_four_day_week_employer_share: bySchedule.find((s) => s.schedule_type === '4_day_week')?.share ?? 0,
    median_full_time_weekly_hours: hours.length ? quantile(hours, 0.5) : undefined,
    remote_share_of_jobs: {
      remote: round(arrangement.remote / total),
      hybrid: round(arrangement.hybrid / total),
      onsite: round(arrangement.onsite / total),
    },
    salary_by_category: ranges(byCategory),
    salary_by_level: ranges(byLevel),
    caveats: [
      'Schedule policies, hours and work-life scores are self-reported by employers and not audited.',
      'Only employers tracked by jobsnap are counted; they are not a random sample of the labour market.',
      'Salary figures cover only live jobs that publish a salary; currencies are converted at the dataset exchange rates and hourly or monthly pay is annualised (hour x weekly hours x 52, month x 12).',
      'Closed and expired listings are not counted; compressed hours is not counted as a four-day week.',
    ],
  }
  return stats
})

function round(value: number): number {
  return Math.round(value * 1000) / 1000
}
