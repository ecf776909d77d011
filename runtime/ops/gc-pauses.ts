/**
 * Garbage-collection pauses as V8 reports them (perf_hooks `gc` entries):
 * the longest since the server became ready and how many there were, shown
 * on /health so a load test, or an operator, can see what the collector
 * costs a request that waits behind it. The load's own collections (at 1M
 * jobs, a full one of tens of milliseconds before `/ready`) delay no request
 * and are left out: `markReady` starts the count.
 */
import { performance, PerformanceObserver } from 'node:perf_hooks'

export interface GcPauses {
  /** Longest single pause since ready (or since watching began, before it), milliseconds. */
  longestMs(): number
  collections(): number
  /** Counts from now on: collections that began earlier are left out, even when V8 reports them later. */
  markReady(): void
  stop(): void
}

export function watchGcPauses(): GcPauses {
  let longest = 0
  let count = 0
  let since = 0
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      // Entries arrive a turn or more after their collection: go by when it began.
      if (entry.startTime < since) continue
      count++
      if (entry.duration > longest) longest = entry.duration
    }
  })
  observer.observe({ entryTypes: ['gc'] })
  return {
    longestMs: () => longest,
    collections: () => count,
    markReady: () => {
      since = performance.now()
      longest = 0
      count = 0
    },
    stop: () => observer.disconnect(),
  }
}
