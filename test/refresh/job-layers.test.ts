/**
 * The per-job files in layers (core/job-layers.ts): a rebuild where few jobs
 * changed puts only their files in its own folder, over the last full
 * layer, with a whiteout for each job gone since; the next delta is over the
 * same base; pruning keeps every base a kept snapshot looks through; past the
 * threshold (or with it at 0) a build makes a full layer again. Every live
 * job's file, looked up as a front does, is the bytes the manifest names.
 */
import { readdir, readFile, rename, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BuildResult, listSnapshots, rollbackSnapshot } from '../../build/index.ts'
import {
  contentHash,
  eachJobFile,
  JOB_BASE_HASHES,
  JOB_WHITEOUTS,
  jobFileOnDisk,
  jobLayerBase,
  type SnapshotManifest,
  snapshotPaths,
} from '../../core/index.ts'
import {
  build,
  createDataset,
  editJobs,
  readJobIndex,
  readSnapshotFile,
  type RefreshDataset,
  retitleAll,
  snapshotFilePath,
} from './support/dataset.ts'

let dataset: RefreshDataset
let tick = 0
/** Each build its own reference time (snapshot ids start with it). */
const nextNow = () => new Date(Date.UTC(2030, 0, 1, 0, 0, ++tick))

beforeAll(async () => {
  dataset = await createDataset({ prefix: 'layers', jobs: 200, companies: 20 })
})

afterAll(async () => {
  await dataset?.cleanup()
})

const ownJobFiles = async (result: BuildResult) =>
  (await readdir(path.join(result.snapshotDir, 'v2/jobs')).catch(() => [] as string[])).sort()
const whiteouts = async (result: BuildResult) =>
  (await readdir(path.join(result.snapshotDir, JOB_WHITEOUTS)).catch(() => [] as string[])).sort()

/** Every job file the manifest names, looked up through the layers, has the manifest's hash. */
async function expectEveryJobServed(result: Pick<BuildResult, 'snapshotId' | 'manifest' | 'files'>): Promise<void> {
  let jobs = 0
  for (const [file, hash] of result.files) {
    if (!file.startsWith('v2/jobs/')) continue
    jobs++
    expect(contentHash(await readSnapshotFile(dataset.distDir, result.snapshotId, file)), file).toBe(hash)
  }
  expect(jobs).toBe(result.manifest.counts.live_jobs)
}

/** What a delta recorded of its base's files under the jobs it overrides: slug -> hash. */
async function baseHashes(result: BuildResult): Promise<Map<string, string>> {
  const text = await readFile(path.join(result.snapshotDir, JOB_BASE_HASHES), 'utf8')
  return new Map(
    text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => line.split('\t') as [string, string]),
  )
}

const inode = async (result: BuildResult, file: string) =>
  (await stat(await snapshotFilePath(dataset.distDir, result.snapshotId, file))).ino

describe('job files in layers', () => {
  let full: BuildResult
  let delta: BuildResult
  let slugs: string[]
  let ids: string[]

  it('a rebuild puts only the changed jobs in its folder, over the full layer, and a whiteout for a job gone', async () => {
    full = await build(dataset, { now: nextNow() })
    expect(full.jobBase).toBeUndefined()
    expect(await jobLayerBase(full.snapshotDir)).toBeUndefined()
    expect((await ownJobFiles(full)).length).toBe(full.manifest.counts.live_jobs)
    const index = await readJobIndex(dataset.distDir, full.snapshotId)
    slugs = index.jobs.map((job) => job.slug)
    ids = index.jobs.map((job) => job.id)
    await editJobs(dataset.dataDir, (jobs) => {
      jobs.find((job) => job.id === ids[0])!.title += ' (edited)'
      jobs.find((job) => job.id === ids[1])!.status = 'closed'
    })
    delta = await build(dataset, { now: nextNow() })
    expect(delta.jobBase).toBe(full.snapshotId)
    expect(await jobLayerBase(delta.snapshotDir)).toBe(full.snapshotId)
    expect(await ownJobFiles(delta)).toEqual([`${slugs[0]}.json`])
    expect(await whiteouts(delta)).toEqual([slugs[1]])
    expect(delta.jobFilesInBase).toBe(delta.manifest.counts.live_jobs - 1)
    await expectEveryJobServed(delta)
    expect(jobFileOnDisk(delta.snapshotDir, snapshotPaths.v2Job(slugs[1]!))).toBeUndefined()
    // An unchanged job's file is the base's own, not a copy.
    expect(await inode(delta, snapshotPaths.v2Job(slugs[2]!))).toBe(await inode(full, snapshotPaths.v2Job(slugs[2]!)))
    // The base's view is its own: the closed job is there, the edited one as it was.
    await expectEveryJobServed(full)
  })

  it('the next delta stays over the same base: the previous delta’s files linked, a re-added job back', async () => {
    await editJobs(dataset.dataDir, (jobs) => {
      jobs.find((job) => job.id === ids[1])!.status = 'live'
      jobs.find((job) => job.id === ids[3])!.title += ' (edited)'
    })
    const next = await build(dataset, { now: nextNow() })
    expect(next.jobBase).toBe(full.snapshotId)
    // The re-added job was the base's, byte for byte: it is left there, and its whiteout is gone.
    expect(await ownJobFiles(next)).toEqual([`${slugs[0]}.json`, `${slugs[3]}.json`].sort())
    expect(await whiteouts(next)).toEqual([])
    expect(await inode(next, snapshotPaths.v2Job(slugs[0]!))).toBe(await inode(delta, snapshotPaths.v2Job(slugs[0]!)))
    await expectEveryJobServed(next)
    // The edit undone: the job's file is the base's again, not a copy in the delta.
    await editJobs(dataset.dataDir, (jobs) => {
      const job = jobs.find((j) => j.id === ids[3])!
      job.title = job.title.replace(/ \(edited\)$/, '')
    })
    const undone = await build(dataset, { now: nextNow() })
    expect(undone.jobBase).toBe(full.snapshotId)
    expect(await ownJobFiles(undone)).toEqual([`${slugs[0]}.json`])
    await expectEveryJobServed(undone)
    // What the base holds under the one job the delta overrides: the full layer's hash of it.
    const jobFile = snapshotPaths.v2Job(slugs[0]!)
    expect(await baseHashes(undone)).toEqual(new Map([[slugs[0]!, full.files.get(jobFile)!]]))
  })

  it('tells a change undone by the hash the previous delta recorded, without reading the base’s file', async () => {
    await editJobs(dataset.dataDir, (jobs) => {
      jobs.find((job) => job.id === ids[6])!.title += ' (edited)'
    })
    const edited = await build(dataset, { now: nextNow() })
    expect(await ownJobFiles(edited)).toEqual([`${slugs[0]}.json`, `${slugs[6]}.json`].sort())
    await editJobs(dataset.dataDir, (jobs) => {
      const job = jobs.find((j) => j.id === ids[6])!
      job.title = job.title.replace(/ \(edited\)$/, '')
    })
    // The base's file out of reach while the build runs: a build that read it could not tell it is unchanged.
    const baseFile = path.join(full.snapshotDir, snapshotPaths.v2Job(slugs[6]!))
    await rename(baseFile, `${baseFile}.away`)
    const undone = await build(dataset, { now: nextNow() }).finally(() => rename(`${baseFile}.away`, baseFile))
    expect(await ownJobFiles(undone)).toEqual([`${slugs[0]}.json`])
    await expectEveryJobServed(undone)
  })

  it('a delta made before base hashes were recorded: an undone change is found by reading the base’s file', async () => {
    await editJobs(dataset.dataDir, (jobs) => {
      jobs.find((job) => job.id === ids[7])!.title += ' (edited)'
    })
    const edited = await build(dataset, { now: nextNow() })
    await rm(path.join(edited.snapshotDir, JOB_BASE_HASHES))
    await editJobs(dataset.dataDir, (jobs) => {
      const job = jobs.find((j) => j.id === ids[7])!
      job.title = job.title.replace(/ \(edited\)$/, '')
    })
    const undone = await build(dataset, { now: nextNow() })
    expect(await ownJobFiles(undone)).toEqual([`${slugs[0]}.json`])
    await expectEveryJobServed(undone)
    // Recorded again from the base's bytes.
    const jobFile = snapshotPaths.v2Job(slugs[0]!)
    expect(await baseHashes(undone)).toEqual(new Map([[slugs[0]!, full.files.get(jobFile)!]]))
  })

  it('pruning keeps the base a kept snapshot looks through, and a rollback target still finds its files', async () => {
    await editJobs(dataset.dataDir, (jobs) => {
      jobs.find((job) => job.id === ids[4])!.title += ' (edited)'
    })
    const kept = await build(dataset, { now: nextNow(), keepSnapshots: 2 })
    expect(kept.jobBase).toBe(full.snapshotId)
    const onDisk = await listSnapshots(dataset.distDir)
    expect(onDisk).toContain(full.snapshotId)
    expect(onDisk.length).toBe(3)
    await expectEveryJobServed(kept)
    const { to } = await rollbackSnapshot(dataset.distDir)
    expect(await jobLayerBase(path.join(dataset.distDir, 'snapshots', to))).toBe(full.snapshotId)
    // What the rollback target's manifest names is all there, through its base.
    const current = path.join(dataset.distDir, 'current')
    const manifest = JSON.parse(await readFile(path.join(current, snapshotPaths.manifest), 'utf8')) as SnapshotManifest
    expect(manifest.snapshot_id).toBe(to)
    const files = new Map(Object.entries(manifest.files))
    const listed = eachJobFile(
      await readFile(path.join(current, snapshotPaths.jobFiles)),
      manifest.job_files,
      (file, hash) => {
        files.set(file, hash)
      },
    )
    expect(listed).toBe(true)
    await expectEveryJobServed({ snapshotId: to, manifest, files })
  })

  it('starts a new full layer past the threshold, or always with it at 0; the old base is then pruned', async () => {
    await editJobs(dataset.dataDir, (jobs) => {
      jobs.find((job) => job.id === ids[5])!.title += ' (edited)'
    })
    const off = await build(dataset, { now: nextNow(), jobDeltaMaxPercent: 0 })
    expect(off.jobBase).toBeUndefined()
    expect((await ownJobFiles(off)).length).toBe(off.manifest.counts.live_jobs)
    expect(await whiteouts(off)).toEqual([])
    await expectEveryJobServed(off)
    const over = await build(dataset, { now: nextNow() })
    expect(over.jobBase).toBe(off.snapshotId)
    // Every job changed: far past the threshold (20% by default), so a full layer, and no kept snapshot needs the old base.
    await retitleAll(dataset.dataDir, 2)
    const past = await build(dataset, { now: nextNow(), keepSnapshots: 1 })
    expect(past.jobBase).toBeUndefined()
    expect((await ownJobFiles(past)).length).toBe(past.manifest.counts.live_jobs)
    await expectEveryJobServed(past)
    expect(await listSnapshots(dataset.distDir)).toEqual([past.snapshotId])
  })
})
