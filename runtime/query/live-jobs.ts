/**
 * Figures over a snapshot's live jobs (the MCP tools, the company endpoints). A job whose
 * expires_at passes before the next build stops being live at once
 * (docs/api.md: Live), so such figures are recomputed whenever
 * another job has expired (the rule the response cache keys on): once per
 * change, not once per call.
 */
import { livePositions } from './run-query.ts'
import type { LoadedSnapshot } from '../snapshot/load.ts'

/** Memoizes `compute` (given the live positions, and the time that made them live) per snapshot until another job expires. */
export function memoizeUntilExpiry<T>(
  compute: (snapshot: LoadedSnapshot, live: number[], now: number) => T,
): (snapshot: LoadedSnapshot, now: number) => T {
  const cache = new WeakMap<LoadedSnapshot, { expired: number; value: T }>()
  return (snapshot, now) => {
    const expired = snapshot.jobs.expiredCount(now)
    const cached = cache.get(snapshot)
    if (cached?.expired === expired) return cached.value
    const value = compute(snapshot, livePositions(snapshot.jobs, now), now)
    cache.set(snapshot, { expired, value })
    return value
  }
}

/** Company id -> live jobs at `now`; a company with none is absent. */
export const liveJobsByCompany = memoizeUntilExpiry((snapshot, live) => {
  const counts = new Map<string, number>()
  for (const position of live) {
    const id = snapshot.jobs.valueAt('company', position)!
    counts.set(id, (counts.get(id) ?? 0) + 1)
  }
  return counts
})
