/**
 * After a hot swap the previous snapshot's memory goes back within seconds,
 * not at V8's next full collection (which, under steady load, may be
 * minutes away): the holder asks for one collection shortly after each swap,
 * one V8 marks incrementally rather than a forced one (a forced collection
 * marks the whole heap in one pause, which every waiting request sits
 * through: runtime/ops/collect-garbage.ts).
 */
import { constants, PerformanceObserver } from 'node:perf_hooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFileCache, SnapshotHolder } from '../../runtime/index.ts'
import { build, createDataset, retitleAll, type RefreshDataset } from './support/dataset.ts'
import { eventually } from './support/processes.ts'

let dataset: RefreshDataset

beforeAll(async () => {
  dataset = await createDataset({ prefix: 'swap-memory' })
  await build(dataset, { now: new Date(Date.now() - 60_000) })
})

afterAll(async () => {
  await dataset?.cleanup()
})

describe('a hot swap', () => {
  it('lets the previous snapshot be collected within a few seconds, with no request holding it, by no forced collection', async () => {
    const holder = new SnapshotHolder(dataset.distDir, createFileCache(0))
    await holder.reload()
    const previousId = holder.current.id
    // A FinalizationRegistry, not a WeakRef: each deref() of a WeakRef keeps its target through a marking
    // under way, which an incremental collection is for a while.
    let collected = false
    const registry = new FinalizationRegistry<string>(() => {
      collected = true
    })
    registry.register(holder.current, previousId)

    await retitleAll(dataset.dataDir, 1)
    await build(dataset)
    const forced: number[] = []
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        const detail = (entry as unknown as { detail?: { kind?: number; flags?: number } }).detail
        if (
          detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR &&
          (detail.flags ?? 0) & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED
        )
          forced.push(entry.duration)
      }
    })
    observer.observe({ entryTypes: ['gc'] })
    try {
      const swapped = await holder.reload()
      expect(swapped.changed).toBe(true)
      expect(holder.current.id).not.toBe(previousId)
      await eventually(() => (collected ? true : undefined), 6_000, 'the previous snapshot collected')
      expect(forced, 'full collections forced after the swap (pauses, ms)').toEqual([])
    } finally {
      observer.disconnect()
    }
  })
})
