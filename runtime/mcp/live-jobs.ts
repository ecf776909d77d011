/**
 * Live jobs per employer at a given time. The build counts them, but a job
 * whose expires_at passes before the next build stops being live at once
 * (DECISIONS.md "What live means"), so the counts are recomputed whenever
 * another job has expired: once per change, not once per call.
 */
import type { LoadedSnapshot } from '../snapshot.ts'

const cache = new WeakMap<LoadedSnapshot, { expired: number; counts: Map<string, number> }>()

/** Company id -> live jobs at `now`; a company with none is absent. */
export function liveJobsByCompany(snapshot: LoadedSnapshot, now: number): Map<string, number> {
  const expired = snapshot.jobs.expiredCount(now)
  const cached = cache.get(snapshot)
  if (cached?.expired === expired) return cached.counts
  const counts = new Map<string, number>()
  const { jobs } = snapshot.jobs
  for (let position = 0; position < jobs.length; position++) {
    if (snapshot.jobs.isExpired(position, now)) continue
    const id = jobs[position]!.company_id
    counts.set(id, (counts.get(id) ?? 0) + 1)
  }
  cache.set(snapshot, { expired, counts })
  return counts
}
