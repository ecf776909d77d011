/**
 * /health's garbage-collection figures count from ready: the load's own
 * collections (a full one before `/ready`, tens of milliseconds at 1M jobs)
 * delay no request. V8 reports a collection a turn or more after it ran, so
 * the watcher goes by when each began, not by when it hears of it.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { watchGcPauses } from '../../runtime/index.ts'

const settle = () => new Promise((resolve) => setTimeout(resolve, 100))

describe('GC pauses on /health', () => {
  it('leaves out collections begun before ready, even when V8 reports them after it', async () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const all = watchGcPauses()
    const fromReady = watchGcPauses()
    try {
      for (let i = 0; i < 5; i++) gc()
      // In the same turn as the collections: none of them has been reported yet.
      fromReady.markReady()
      await settle()
      expect(all.collections()).toBeGreaterThanOrEqual(5)
      expect(fromReady.collections()).toBeLessThan(5)
      for (let i = 0; i < 3; i++) gc()
      await settle()
      expect(fromReady.collections()).toBeGreaterThanOrEqual(3)
      expect(fromReady.longestMs()).toBeGreaterThan(0)
    } finally {
      all.stop()
      fromReady.stop()
    }
  })
})
