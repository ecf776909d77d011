/**
 * get_market_stats: aggregates over one snapshot's live jobs, computed once
 * per snapshot and again only when another job has expired since
 * (memoizeUntilExpiry: an expired job is never counted).
 */
import { z } from 'zod'
import { SCHEDULE_TYPES, SCHEDULE_TYPE_VALUES } from '../../core/taxonomy.ts'
import type { LoadedSnapshot } from '../snapshot.ts'
import { memoizeUntilExpiry } from './live-jobs.ts'

const Range = z.object({
  jobs_with_salary: z.int(),
  p25_usd: z.int(),
  median_usd: z.int(),
  p75_usd: z.int(),
})

export const MarketStatsSchema = z.object({
  as_of: z.string().describe('When the snapshot was built (the data as-of time).'),
  exchange_rates_as_of: z.string(),
  employers_tracked: z.int(),
  live_jobs: z.int(),
  employers_by_schedule: z.array(
    z.object({ schedule_type: z.string(), label: z.string(), employers: z.int(), share: z.number() }),
  ),
  true_four_day_week_employer_share: z
    .number()
    .describe('Share of employers on 4_day_week only; compressed hours excluded.'),
  median_full_time_weekly_hours: z.number().optional(),
  remote_share_of_jobs: z.object({ remote: z.number(), hybrid: z.number(), onsite: z.number() }),
  salary_by_category: z
    .record(z.string(), Range)
    .describe('Annualised USD of the top of each published range, converted at the dataset rates.'),
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

export function renderMarketStats(stats: MarketStats): string {
  return [
    `Market data as of ${stats.as_of} (${stats.employers_tracked} employers, ${stats.live_jobs} live jobs).`,
    `Employers by schedule: ${stats.employers_by_schedule.map((s) => `${s.label} ${(s.share * 100).toFixed(1)}%`).join(', ')}.`,
    `True four-day week (fewer hours, full pay): ${(stats.true_four_day_week_employer_share * 100).toFixed(1)}% of employers.`,
    stats.median_full_time_weekly_hours !== undefined
      ? `Median full-time week: ${stats.median_full_time_weekly_hours} hours.`
      : undefined,
    `Jobs: ${(stats.remote_share_of_jobs.remote * 100).toFixed(1)}% remote, ${(stats.remote_share_of_jobs.hybrid * 100).toFixed(1)}% hybrid, ${(stats.remote_share_of_jobs.onsite * 100).toFixed(1)}% onsite.`,
    `Median salary by level (USD/year): ${Object.entries(stats.salary_by_level)
      .map(([k, r]) => `${k} ${r.median_usd.toLocaleString('en-US')}`)
      .join(', ')}.`,
    `Caveats: ${stats.caveats.join(' ')}`,
  ]
    .filter(Boolean)
    .join('\n')
}
