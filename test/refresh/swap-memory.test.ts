/**
 * After a hot swap the previous snapshot's memory goes back within seconds,
 * not at V8's next full collection (which, under steady load, may be
 * minutes away): the holder asks for one collection shortly after each swap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFileCache, type LoadedSnapshot, SnapshotHolder } from '../../runtime/index.ts'
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
  it('lets the previous snapshot be collected within a few seconds, with no request holding it', async () => {
    const holder = new SnapshotHolder(dataset.distDir, createFileCache(0))
    await holder.reload()
    const previous = new WeakRef<LoadedSnapshot>(holder.current)
    const previousId = holder.current.id

    await retitleAll(dataset.dataDir, 1)
    await build(dataset)
    const swapped = await holder.reload()
    expect(swapped.changed).toBe(true)
    expect(holder.current.id).not.toBe(previousId)

    // WeakRef.deref() keeps its target alive until the current job ends: each check runs in a new one.
    await eventually(
      () => (previous.deref() === undefined ? true : undefined),
      6_000,
      'the previous snapshot collected',
    )
  })
})
