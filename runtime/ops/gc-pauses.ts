/**
 * Garbage-collection pauses as V8 reports them (perf_hooks `gc` entries):
 * the longest since the server started and how many there were, shown on
 * /health so a load test, or an operator, can see what the collector costs
 * a request that waits behind it.
 */
import { PerformanceObserver } from 'node:perf_hooks'

export interface GcPauses {
  /** Longest single pause, milliseconds. */
  longestMs(): number
  collections(): number
  stop(): void
}

export function watchGcPauses(): GcPauses {
  let longest = 0
  let count = 0
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      count++
      if (entry.duration > longest) longest = entry.duration
    }
  })
  observer.observe({ entryTypes: ['gc'] })
  return { longestMs: () => longest, collections: () => count, stop: () => observer.disconnect() }
}
