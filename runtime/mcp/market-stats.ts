/**
 * get_market_stats: aggregates over one snapshot's live jobs, computed once
 * per snapshot and again only when another job has expired since
 * (memoizeUntilExpiry: an expired job is never counted).
 */
import { z } from 'zod'
import { EXPORTS_PATH, exportsIndex } from '../../core/exports.ts'
import { SCHEDULE_TYPE_VALUES } from '../../core/taxonomy.ts'
import type { LoadedSnapshot } from '../snapshot/load.ts'
import { liveJobsByCompany, memoizeUntilExpiry } from '../query/live-jobs.ts'
import { quantile } from './quantile.ts'

export const MarketStatsSchema = z.object({
  as_of: z.string(),
  employers_tracked: z.int(),
  live_jobs: z.int(),
  employers_by_schedule: z.array(z.object({ schedule_type: z.string(), employers: z.int(), share: z.number() })),
  true_four_day_week_employer_share: z.number(),
  median_full_time_weekly_hours: z.number().optional(),
  remote_share_of_jobs: z.record(z.string(), z.number()),
  caveats: z.array(z.string()),
  /**
   * Where the whole snapshot can be downloaded: an agent hands these URLs on, no tool streams them. Its
   * members (index_url, snapshot_id, files with name, url, bytes, rows, sha256, and how_to_mirror) explain
   * themselves in the result; the schema names none of them, to keep tools/list within its budget.
   */
  bulk_exports: z.looseObject({}),
})
export type MarketStats = z.infer<typeof MarketStatsSchema>

export const marketStats = memoizeUntilExpiry((snapshot: LoadedSnapshot, live: number[], now: number): MarketStats => {
  // Employers with a live job, as everywhere else: one whose last job closed or expired is not tracked.
  const liveJobs = liveJobsByCompany(snapshot, now)
  const table = snapshot.companies
  const companies: number[] = []
  for (let i = 0; i < table.size; i++) if (liveJobs.has(table.id(i))) companies.push(i)
  const bySchedule = SCHEDULE_TYPE_VALUES.map((type) => {
    const employers = companies.filter((i) => table.scheduleType(i) === type).length
    return {
      schedule_type: type,
      employers,
      share: companies.length ? round(employers / companies.length) : 0,
    }
  })
  const hours = companies
    .map((i) => table.hoursFullTime(i))
    .filter((h): h is number => h !== undefined)
    .sort((a, b) => a - b)
  const arrangement = { remote: 0, hybrid: 0, onsite: 0 }
  const index = snapshot.jobs
  for (const position of live) {
    arrangement[index.valueAt('work_arrangement', position) as keyof typeof arrangement]++
  }
  const total = live.length || 1
  const stats: MarketStats = {
    as_of: snapshot.manifest.built_at,
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
    caveats: [
      'Schedule policies, hours and work-life scores are self-reported by employers and not audited.',
      'Only employers tracked by jobsnap are counted; they are not a random sample of the labour market.',
      'Closed and expired listings are not counted; compressed hours is not counted as a four-day week.',
    ],
    bulk_exports: {
      index_url: EXPORTS_PATH,
      snapshot_id: snapshot.id,
      files: exportsIndex(snapshot.id, snapshot.manifest.built_at, snapshot.manifest.exports).files.map(
        ({ name, url, bytes, rows, sha256 }) => ({ name, url, bytes, rows, sha256 }),
      ),
      how_to_mirror: `Download ${EXPORTS_PATH}/jobs.ndjson.gz (one job a line, as /api/v2/jobs/{slug} serves it), keep its X-Snapshot-Id, then poll /api/v2/changes?since=<that id>. jobs.parquet is the same jobs as a table for DuckDB, pandas or polars.`,
    },
  }
  return stats
})

function round(value: number): number {
  return Math.round(value * 1000) / 1000
}
