/**
 * A full garbage collection, on demand. After a hot swap the previous
 * snapshot (its packed bodies and index: ~190 MB at 100k jobs, mostly
 * outside the JS heap) is garbage, but V8 sees no reason to run a full
 * collection soon: the JS heap barely grew, and external memory only
 * triggers one while it grows. Under steady load the process then held two
 * snapshots for minutes (RSS +50% after the first swap, measured with the
 * soak). Asking once, shortly after each swap, returns that memory
 * (collectGarbageAfterMarking); a forced one (collectGarbage) only where no
 * request waits, before the first snapshot serves.
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
const whenMarkingStarts: (() => void)[] = []
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
      if (kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL) {
        marking = true
        for (const resume of whenMarkingStarts.splice(0)) resume()
      } else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        marking = false
        for (const resume of whenMarkingEnds.splice(0)) resume()
      }
    }
  })
  following.observe({ entryTypes: ['gc'] })
}

/**
 * Bytes of a transient ArrayBuffer that puts V8's external memory past the
 * limit at which it starts an incremental marking: V8 sets that limit 64 MB
 * above the external memory it found at its last full collection.
 */
const NUDGE_BYTES = 128 << 20

/**
 * A full collection that V8 marks incrementally, most of it on its helper
 * threads, with a pause of a few milliseconds to end it, instead of
 * collectGarbage's one atomic pause: in a 1M-job worker that pause was 25-40
 * ms idle and 30-70 ms under load (each forced collection marks the whole
 * heap, the server's code included, on the spot), the longest stall a hot
 * swap left.
 *
 * JavaScript cannot ask for one directly. What starts one is external memory
 * growing past V8's limit, as the load's buffers did: so this allocates one
 * ArrayBuffer over that limit's margin and drops it. Its pages are never
 * touched (a zeroed allocation that large is fresh mapped memory), so it
 * costs no memory. Where V8 starts no marking within `fallbackMs` (another
 * version, other heuristics), it collects as collectGarbage does.
 * Only as exact as followMarking, which must be running.
 */
function collectGarbageIncrementally(fallbackMs: number): void {
  let started = false
  const start = () => {
    started = true
  }
  whenMarkingStarts.push(start)
  void new ArrayBuffer(NUDGE_BYTES)
  if (started || marking) return
  setTimeout(() => {
    const waiting = whenMarkingStarts.indexOf(start)
    if (waiting >= 0) whenMarkingStarts.splice(waiting, 1)
    if (!started) collectGarbage()
  }, fallbackMs).unref()
}

/**
 * A full collection (collectGarbageIncrementally) that starts after any
 * incremental marking under way has ended: a marking that began before the
 * previous snapshot was dropped keeps it (V8 keeps what was reachable when
 * its marking began), and asked for then, a forced collection first finishes
 * that marking in one pause and then collects again in a second, back to
 * back. Waits for V8 to end its marking itself (its own pause, requests
 * served after it), or `maxWaitMs` at most.
 */
export function collectGarbageAfterMarking(maxWaitMs: number): void {
  if (!marking) {
    collectGarbageIncrementally(maxWaitMs)
    return
  }
  let done = false
  const collect = () => {
    if (done) return
    done = true
    clearTimeout(timer)
    // A turn later: not inside the observer's callback, and after the requests the marking's end held up.
    setImmediate(() => collectGarbageIncrementally(maxWaitMs))
  }
  const timer = setTimeout(collect, maxWaitMs).unref()
  whenMarkingEnds.push(collect)
}
