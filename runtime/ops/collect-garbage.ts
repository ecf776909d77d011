/**
 * One full garbage collection, on demand. After a hot swap the previous
 * snapshot (its packed bodies and index: ~190 MB at 100k jobs, mostly
 * outside the JS heap) is garbage, but V8 sees no reason to run a full
 * collection soon: the JS heap barely grew, and external memory only
 * triggers one while it grows. Under steady load the process then held two
 * snapshots for minutes (RSS +50% after the first swap, measured with the
 * soak). Asking once, shortly after each swap, returns that memory.
 *
 * V8 gives JavaScript its `gc()` only under --expose-gc; setting the flag
 * at run time and reading `gc` from a fresh context is the way to get it
 * without asking every launcher (npm start, cluster workers, tests) to pass
 * the flag.
 */
import { constants, PerformanceObserver } from 'node:perf_hooks'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

let gc: (() => void) | undefined

export function collectGarbage(): void {
  if (!gc) {
    setFlagsFromString('--expose-gc')
    gc = runInNewContext('gc') as () => void
  }
  gc()
}

/** Whether V8 is part-way through marking the heap incrementally, as far as its `gc` entries tell (followMarking). */
let marking = false
const whenMarkingEnds: (() => void)[] = []
let following: PerformanceObserver | undefined

/**
 * Follows V8's incremental marking from perf_hooks `gc` entries: one of kind
 * incremental when a marking starts, one of kind major when the collection
 * that ends it is done. Once per process; costs an entry per collection.
 */
export function followMarking(): void {
  if (following) return
  following = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as unknown as { detail?: { kind?: number } }).detail?.kind
      if (kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL) marking = true
      else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        marking = false
        for (const resume of whenMarkingEnds.splice(0)) resume()
      }
    }
  })
  following.observe({ entryTypes: ['gc'] })
}

/**
 * collectGarbage, but not in the middle of an incremental marking (a load's
 * allocations start them): asked for then, V8 first finishes that marking
 * in one pause and then collects again in a second, back to back, and at 1M
 * jobs each is tens of milliseconds that every waiting request sits through.
 * Waits instead for V8 to end its marking itself (its own pause, requests
 * served after it) and then collects, or collects after `maxWaitMs` anyway.
 * Only as exact as followMarking, which must be running.
 */
export function collectGarbageAfterMarking(maxWaitMs: number): void {
  if (!marking) {
    collectGarbage()
    return
  }
  let done = false
  const collect = () => {
    if (done) return
    done = true
    clearTimeout(timer)
    // A turn later: not inside the observer's callback, and after the requests the marking's end held up.
    setImmediate(collectGarbage)
  }
  const timer = setTimeout(collect, maxWaitMs).unref()
  whenMarkingEnds.push(collect)
}
