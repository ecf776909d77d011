/**
 * A publish that lands while the server is still loading the previous one
 * (a quick rollback: `current` goes to B and straight back to A). The holder
 * must not swap B in once its load finishes: `current` stopped naming it
 * before the swap, and a server that showed B even briefly would answer
 * requests from a snapshot the operator had already taken back.
 *
 * The load is held at a known point without timing: B's manifest is replaced
 * by a named pipe, so the loader's read of it waits until the test writes the
 * real bytes into the pipe, after it has pointed `current` back at A.
 */
import { execFileSync } from 'node:child_process'
import { readFile, rename, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { pointCurrentAt } from '../../build/index.ts'
import { snapshotPaths } from '../../core/index.ts'
import { createFileCache, SnapshotHolder } from '../../runtime/index.ts'
import { build, createDataset, retitleAll, snapshotDir, type RefreshDataset } from './support/dataset.ts'

let dataset: RefreshDataset
let snapshotA: string
let snapshotB: string

beforeAll(async () => {
  dataset = await createDataset({ prefix: 'publish-during-load' })
  snapshotA = (await build(dataset, { now: new Date(Date.now() - 60_000) })).snapshotId
  await retitleAll(dataset.dataDir, 1)
  snapshotB = (await build(dataset)).snapshotId
})

afterAll(async () => {
  await dataset?.cleanup()
})

describe('a publish while the server loads the one before', () => {
  it('leaves the server on what `current` names last, never showing the snapshot it stopped naming', async () => {
    const holder = new SnapshotHolder(dataset.distDir, createFileCache(0))
    await pointCurrentAt(dataset.distDir, snapshotA)
    await holder.reload()
    expect(holder.current.id).toBe(snapshotA)

    // B's manifest becomes a pipe: loading B stops at reading it until the test writes.
    const manifestB = path.join(snapshotDir(dataset.distDir, snapshotB), snapshotPaths.manifest)
    const manifestBytes = await readFile(manifestB)
    await rename(manifestB, `${manifestB}.held`)
    execFileSync('mkfifo', [manifestB])

    const seen = new Set<string>()
    const watching = setInterval(() => seen.add(holder.current.id), 1)
    try {
      await pointCurrentAt(dataset.distDir, snapshotB)
      const reloading = holder.reload()
      // Back to A while B's load waits on its manifest, then let the load go on.
      await pointCurrentAt(dataset.distDir, snapshotA)
      await writeFile(manifestB, manifestBytes)
      const result = await reloading
      await new Promise((resolve) => setTimeout(resolve, 20))

      expect(holder.current.id).toBe(snapshotA)
      expect(result).toEqual({ changed: false, id: snapshotA })
      expect([...seen]).toEqual([snapshotA])
    } finally {
      clearInterval(watching)
      await rename(`${manifestB}.held`, manifestB)
    }

    // B published for real is followed as usual.
    await pointCurrentAt(dataset.distDir, snapshotB)
    expect(await holder.reload()).toEqual({ changed: true, id: snapshotB })
  })
})
