/**
 * The packed bodies in layers (core/packed-bodies.ts BodyLayers): a rebuild
 * whose job files are a delta writes only the bodies its base does not hold,
 * linking the last whole bodies files as its base; the next stays over the
 * same base; a server loads such a snapshot (bodies from memory or read by
 * position) and serves the bodies a full build of the same data holds; a
 * delta or base changed after the build is refused, and so is a base that is
 * gone; pruning keeps the base a kept snapshot stands on; past the threshold
 * (or with it at 0) a build writes them whole again.
 */
import { open, readFile, readlink, realpath, rename, stat } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BuildResult } from '../../build/index.ts'
import { readVerifiedFiles, snapshotPaths, VERIFIED_FILES } from '../../core/index.ts'
import { createFileCache, loadSnapshot } from '../../runtime/index.ts'
import {
  build,
  createDataset,
  editJobs,
  PACKED_BODIES,
  packedBodiesOf,
  type RefreshDataset,
  snapshotDir,
} from './support/dataset.ts'

let dataset: RefreshDataset
let tick = 0
const nextNow = () => new Date(Date.UTC(2030, 1, 1, 0, 0, ++tick))

beforeAll(async () => {
  dataset = await createDataset({ prefix: 'body-layers', jobs: 300, companies: 30, seed: 7 })
})

afterAll(async () => {
  await dataset?.cleanup()
})

const sizeOf = async (dir: string, file: string) => (await stat(path.join(dir, file))).size

/** The snapshot loaded (its v2 bodies held, or read by position) and its v2 bodies read whole through it. */
async function servedBodies(dir: string, bodiesInMemoryBytes: number): Promise<Buffer> {
  const loaded = await loadSnapshot(dir, createFileCache(0), bodiesInMemoryBytes)
  try {
    return Buffer.from(loaded.v2Bodies.range(0, loaded.v2Bodies.size))
  } finally {
    loaded.close()
  }
}

/** Flips one byte of `file` in place, runs `check`, and puts it back. */
async function withByteFlipped(file: string, at: number, check: () => Promise<void>): Promise<void> {
  const handle = await open(file, 'r+')
  try {
    const original = Buffer.alloc(1)
    await handle.read(original, 0, 1, at)
    await handle.write(Buffer.from([original[0] === 0x41 ? 0x42 : 0x41]), 0, 1, at)
    try {
      await check()
    } finally {
      await handle.write(original, 0, 1, at)
    }
  } finally {
    await handle.close()
  }
}

describe('packed bodies in layers', () => {
  let whole: BuildResult
  let delta: BuildResult
  let ids: string[]

  it('a rebuild writes only the changed bodies, over the previous whole files, read as a full build’s', async () => {
    whole = await build(dataset, { now: nextNow() })
    for (const paths of PACKED_BODIES)
      await expect(readlink(path.join(whole.snapshotDir, paths.base))).rejects.toThrow(/ENOENT/)
    const text = await readFile(path.join(dataset.dataDir, 'jobs.ndjson'), 'utf8')
    ids = text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => (JSON.parse(line) as { id: string }).id)
    await editJobs(dataset.dataDir, (jobs) => {
      for (const id of ids.slice(0, 3)) jobs.find((job) => job.id === id)!.title += ' (edited)'
    })
    delta = await build(dataset, { now: nextNow() })
    expect(delta.jobBase).toBe(whole.snapshotId)
    for (const paths of PACKED_BODIES) {
      expect(await readlink(path.join(delta.snapshotDir, paths.base))).toBe(`../../${whole.snapshotId}/${paths.bodies}`)
      // Three jobs of ~290 changed: the delta holds their bodies, a small part of the whole.
      expect(await sizeOf(delta.snapshotDir, paths.bodies)).toBeLessThan(
        (await sizeOf(whole.snapshotDir, paths.bodies)) / 20,
      )
      expect(delta.manifest.index_hashes?.[paths.base]).toBe(whole.manifest.index_hashes?.[paths.bodies])
      expect(delta.manifest.index_hashes?.[paths.starts]).toBeDefined()
    }
    const fullDist = path.join(dataset.root, 'dist-full-bodies')
    const full = await build(dataset, { now: nextNow(), distDir: fullDist })
    const expected = packedBodiesOf(full.snapshotDir)
    const layered = packedBodiesOf(delta.snapshotDir)
    for (const [k, bodies] of expected.entries()) expect(layered[k]!.equals(bodies), `bodies ${k}`).toBe(true)
    // Loaded by a server, from memory and by position: the same bytes.
    for (const inMemory of [1 << 30, 0])
      expect((await servedBodies(delta.snapshotDir, inMemory)).equals(expected[0]!)).toBe(true)
  })

  it('the build vouches for the base only as the previous snapshot’s record did', async () => {
    const record = await readVerifiedFiles(delta.snapshotDir)
    const previous = await readVerifiedFiles(whole.snapshotDir)
    for (const paths of PACKED_BODIES) {
      expect(record[paths.base]?.hash).toBe(whole.manifest.index_hashes?.[paths.bodies])
      expect(record[paths.base]?.identity).toBe(previous[paths.bodies]?.identity)
      expect(record[paths.starts]?.hash).toBe(delta.manifest.index_hashes?.[paths.starts])
    }
  })

  it('refuses a delta or a base changed after the build, and a base that is gone', async () => {
    const dir = delta.snapshotDir
    const paths = snapshotPaths.v2Bodies
    for (const file of [paths.bodies, paths.base])
      await withByteFlipped(path.join(dir, file), 5, async () => {
        for (const inMemory of [1 << 30, 0])
          await expect(servedBodies(dir, inMemory), file).rejects.toThrow(/does not match the hash/)
      })
    await withByteFlipped(path.join(dir, paths.starts), 3, async () => {
      await expect(servedBodies(dir, 0)).rejects.toThrow(/v2-jobs\.at does not match the hash/)
    })
    const baseFile = path.join(whole.snapshotDir, paths.bodies)
    await rename(baseFile, `${baseFile}.away`)
    try {
      await expect(servedBodies(dir, 0)).rejects.toThrow(/v2-jobs\.base\.bin/)
    } finally {
      await rename(`${baseFile}.away`, baseFile)
    }
    expect((await servedBodies(dir, 0)).length).toBeGreaterThan(0)
  })

  it('the next rebuild stays over the same base, with the previous delta’s bodies carried on', async () => {
    await editJobs(dataset.dataDir, (jobs) => {
      jobs.find((job) => job.id === ids[5])!.title += ' (edited)'
    })
    const deltaSizes = await Promise.all(PACKED_BODIES.map((paths) => sizeOf(delta.snapshotDir, paths.bodies)))
    const next = await build(dataset, { now: nextNow(), keepSnapshots: 1 })
    for (const [k, paths] of PACKED_BODIES.entries()) {
      expect(await readlink(path.join(next.snapshotDir, paths.base))).toBe(`../../${whole.snapshotId}/${paths.bodies}`)
      expect(await sizeOf(next.snapshotDir, paths.bodies)).toBeGreaterThan(deltaSizes[k]!)
    }
    // Pruned down to one snapshot, the base it stands on is kept, and it loads.
    await expect(stat(whole.snapshotDir)).resolves.toBeDefined()
    await expect(stat(delta.snapshotDir)).rejects.toThrow(/ENOENT/)
    expect((await servedBodies(next.snapshotDir, 0)).equals(packedBodiesOf(next.snapshotDir)[0]!)).toBe(true)
    // With the threshold at 0, whole files again; the old base is then pruned.
    const again = await build(dataset, { now: nextNow(), keepSnapshots: 1, jobDeltaMaxPercent: 0 })
    for (const paths of PACKED_BODIES)
      await expect(readlink(path.join(again.snapshotDir, paths.base))).rejects.toThrow(/ENOENT/)
    expect(
      packedBodiesOf(again.snapshotDir)[0]!.equals(
        await readFile(path.join(again.snapshotDir, snapshotPaths.v2Bodies.bodies)),
      ),
    ).toBe(true)
    await expect(stat(snapshotDir(dataset.distDir, whole.snapshotId))).rejects.toThrow(/ENOENT/)
    await expect(readFile(path.join(again.snapshotDir, VERIFIED_FILES))).resolves.toBeDefined()
  })

  it('a base deleted by hand: the next build reuses nothing and writes the bodies whole, losing none', async () => {
    await editJobs(dataset.dataDir, (jobs) => {
      jobs.find((job) => job.id === ids[6])!.title += ' (edited)'
    })
    const layered = await build(dataset, { now: nextNow() })
    const base = path.join(snapshotDir(dataset.distDir, layered.manifest.snapshot_id), snapshotPaths.v2Bodies.base)
    const target = await realpath(base)
    await rename(target, `${target}.away`)
    try {
      await editJobs(dataset.dataDir, (jobs) => {
        jobs.find((job) => job.id === ids[7])!.title += ' (edited)'
      })
      const next = await build(dataset, { now: nextNow() })
      expect(next.recordsReused).toBe(0)
      for (const paths of PACKED_BODIES)
        await expect(readlink(path.join(next.snapshotDir, paths.base))).rejects.toThrow(/ENOENT/)
      const fullDist = path.join(dataset.root, 'dist-full-again')
      const full = await build(dataset, { now: nextNow(), distDir: fullDist })
      const expected = packedBodiesOf(full.snapshotDir)
      for (const [k, bodies] of packedBodiesOf(next.snapshotDir).entries())
        expect(bodies.equals(expected[k]!)).toBe(true)
    } finally {
      await rename(`${target}.away`, target)
    }
  })
})
