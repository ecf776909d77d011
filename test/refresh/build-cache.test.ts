/**
 * The build cache: a rebuild reuses what the previous build worked out for
 * every record whose input, company and build context are unchanged, and
 * publishes exactly the snapshot a full build of the same data publishes,
 * file for file, byte for byte. The rules across records still hold over
 * every record, reused or not.
 */
import { readdir, readFile, readlink, realpath, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BuildResult, DatasetInvalidError } from '../../build/index.ts'
import {
  CURRENT_LINK,
  JOB_BASE_HASHES,
  JOB_DELTA_LIST,
  jobFilesThroughLayers,
  readVerifiedFiles,
  SNAPSHOTS_DIR,
  snapshotPaths,
  VERIFIED_FILES,
} from '../../core/index.ts'
import {
  build,
  createDataset,
  editCompanies,
  editJobs,
  PACKED_BODIES,
  packedBodiesOf,
  type RefreshDataset,
} from './support/dataset.ts'

let dataset: RefreshDataset
const NOW_1 = new Date('2026-10-01T00:00:00Z')
const NOW_2 = new Date('2026-10-02T00:00:00Z')

/** The packed bodies' files, which a delta holds in layers: compared as the bodies they hold (packedBodiesOf). */
const BODIES_FILES = new Set(PACKED_BODIES.flatMap((paths) => [paths.bodies, paths.base, paths.starts]))

/**
 * A snapshot's files as served, relative path -> where it is: the job files looked up through the layers
 * (a delta's own, then its base's but for the whited out), the layers' own entries (v2/gone, the delta's list)
 * and the packed bodies' files left out.
 */
async function filesUnder(dir: string): Promise<Map<string, string>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  const files = entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .filter(
      (file) =>
        !file.startsWith('v2/jobs/') &&
        !file.startsWith('v2/gone/') &&
        file !== JOB_DELTA_LIST &&
        file !== JOB_BASE_HASHES &&
        !BODIES_FILES.has(file),
    )
    .map((file): [string, string] => [file, path.join(dir, file)])
  for (const [slug, file] of jobFilesThroughLayers(dir)) files.push([`v2/jobs/${slug}.json`, file])
  return new Map(files.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

async function jobCount(dataDir: string): Promise<number> {
  return (await readFile(path.join(dataDir, 'jobs.ndjson'), 'utf8')).split('\n').filter((l) => l.trim() !== '').length
}

beforeAll(async () => {
  dataset = await createDataset({ prefix: 'build-cache', jobs: 300, companies: 40, seed: 23 })
})

afterAll(async () => {
  await dataset?.cleanup()
})

describe('build cache', () => {
  let first: BuildResult
  let incremental: BuildResult
  let editedCompanyJobs = 0

  it('a first build reuses nothing; an unchanged rebuild reuses every record and writes no file', async () => {
    // One job expires between the two reference times: reused as not published.
    await editJobs(dataset.dataDir, (jobs) => {
      jobs[7]!.expires_at = '2026-10-01T12:00:00Z'
      jobs[7]!.posted_at = '2026-09-01T00:00:00Z'
    })
    first = await build(dataset, { now: NOW_1, workers: 2 })
    expect(first.recordsReused).toBe(0)
    const again = await build(dataset, { now: NOW_1 })
    expect(again.recordsReused).toBe(300)
    expect(again.filesRewritten).toBe(0)
  })

  it('after edits, reuses exactly the untouched records and publishes what a full build of the same data publishes, byte for byte', async () => {
    let companyId = ''
    await editJobs(dataset.dataDir, (jobs) => {
      jobs[0]!.title = `${jobs[0]!.title} (edited)`
      jobs[1]!.role = 'Edited Role'
      jobs.splice(2, 1)
      jobs.push({
        ...jobs[3]!,
        id: '00000000-0000-4000-8000-00000000abcd',
        slug: 'a-brand-new-job',
        title: 'Brand New Job',
      })
      companyId = jobs[10]!.company_id as string
      editedCompanyJobs = jobs.filter(
        (job, index) => job.company_id === companyId && index > 1 && index !== jobs.length - 1,
      ).length
    })
    await editCompanies(dataset.dataDir, (companies) => {
      companies.find((c) => c.id === companyId)!.name = 'Renamed Company'
    })
    // On two worker threads, the files read on a thread of their own; the full build below all on the
    // build's own thread: both paths, the same bytes.
    incremental = await build(dataset, { now: NOW_2, workers: 2, scanThread: true })
    // Untouched: everything but the two edited, the new one and the renamed company's jobs.
    expect(incremental.recordsReused).toBe((await jobCount(dataset.dataDir)) - 3 - editedCompanyJobs)

    const fullDist = path.join(dataset.root, 'dist-full')
    const full = await build(dataset, { now: NOW_2, distDir: fullDist, workers: 0, scanThread: false })
    expect(full.recordsReused).toBe(0)
    expect(full.snapshotId).toBe(incremental.snapshotId)

    const incrementalFiles = await filesUnder(incremental.snapshotDir)
    const fullFiles = await filesUnder(full.snapshotDir)
    expect(incremental.jobBase, 'the incremental build made a delta of job files').toBe(first.snapshotId)
    expect(full.jobBase).toBeUndefined()
    expect([...incrementalFiles.keys()]).toEqual([...fullFiles.keys()])
    let compared = 0
    for (const file of fullFiles.keys()) {
      // Only the purge lists and the job changes differ: they are relative to the snapshot each build replaced.
      if (file === 'changed-paths.txt' || file === 'changed-tags.txt' || file === 'index/changes.json') continue
      // The verification record names each build's own files (inode, times): only its hashes must agree.
      // The packed bodies' entries name their layers' files: the bodies themselves are compared below.
      if (file === VERIFIED_FILES) {
        const hashes = async (dir: string) =>
          Object.entries(await readVerifiedFiles(dir))
            .filter(([name]) => !BODIES_FILES.has(name))
            .map(([name, { hash }]) => `${name} ${hash}`)
        const recorded = await hashes(full.snapshotDir)
        expect(recorded.length).toBeGreaterThan(0)
        expect(await hashes(incremental.snapshotDir)).toEqual(recorded)
        continue
      }
      const [a, b] = await Promise.all([readFile(incrementalFiles.get(file)!), readFile(fullFiles.get(file)!)])
      // The manifest records each packed bodies file's hash: those of the layers' files differ, the rest must not.
      if (file === 'manifest.json') {
        const withoutBodies = (bytes: Buffer) => {
          const manifest = JSON.parse(bytes.toString()) as { index_hashes: Record<string, string> }
          for (const name of BODIES_FILES) delete manifest.index_hashes[name]
          return manifest
        }
        expect(withoutBodies(a)).toEqual(withoutBodies(b))
        compared++
        continue
      }
      expect(a.equals(b), file).toBe(true)
      compared++
    }
    expect(compared).toBeGreaterThan(300)
    // The incremental build's packed bodies are a delta over the first build's whole files; read through their
    // layers, they are the full build's bodies byte for byte.
    for (const paths of PACKED_BODIES) {
      expect(await readlink(path.join(incremental.snapshotDir, paths.base))).toBe(
        `../../${first.snapshotId}/${paths.bodies}`,
      )
      await expect(readlink(path.join(full.snapshotDir, paths.base))).rejects.toThrow(/ENOENT/)
    }
    const [incrementalBodies, fullBodies] = [packedBodiesOf(incremental.snapshotDir), packedBodiesOf(full.snapshotDir)]
    for (const [k, bodies] of fullBodies.entries()) expect(incrementalBodies[k]!.equals(bodies)).toBe(true)
    expect(fullBodies[0]!.equals(await readFile(path.join(full.snapshotDir, snapshotPaths.v2Bodies.bodies)))).toBe(true)
    await rm(fullDist, { recursive: true, force: true })
  })

  it('a job file deleted by hand from the previous snapshot is written again, not lost', async () => {
    // A file the delta holds itself (a base's file is linked only when a full set is made).
    const victim = (await readdir(path.join(incremental.snapshotDir, 'v2', 'jobs')))[0]!
    const expected = await readFile(path.join(incremental.snapshotDir, 'v2', 'jobs', victim))
    await rm(path.join(incremental.snapshotDir, 'v2', 'jobs', victim))
    const next = await build(dataset, { now: new Date(NOW_2.getTime() + 1000), workers: 0 })
    expect(next.jobBase).toBe(first.snapshotId)
    expect(next.recordsReused).toBe(await jobCount(dataset.dataDir))
    expect((await readFile(path.join(next.snapshotDir, 'v2', 'jobs', victim))).equals(expected)).toBe(true)
  })

  it('a v1 page deleted by hand from the previous snapshot is written again, not lost', async () => {
    // The snapshot published last (the test above built one over `incremental`).
    const pages = path.join(await realpath(path.join(dataset.distDir, CURRENT_LINK)), 'v1', '25')
    const victims = (await readdir(pages)).slice(0, 2)
    const expected = await Promise.all(victims.map((page) => readFile(path.join(pages, page))))
    for (const page of victims) await rm(path.join(pages, page))
    const next = await build(dataset, { now: new Date(NOW_2.getTime() + 2000), workers: 0 })
    expect(next.recordsReused).toBe(await jobCount(dataset.dataDir))
    for (const [i, page] of victims.entries())
      expect((await readFile(path.join(next.snapshotDir, 'v1', '25', page))).equals(expected[i]!)).toBe(true)
  })

  it('a changed exchange-rate table reuses no record', async () => {
    const ratesFile = path.join(dataset.dataDir, 'rates.json')
    const rates = JSON.parse(await readFile(ratesFile, 'utf8')) as { usd_per_unit: Record<string, number> }
    rates.usd_per_unit.EUR = (rates.usd_per_unit.EUR ?? 1) * 1.01
    await writeFile(ratesFile, JSON.stringify(rates))
    const result = await build(dataset, { now: NOW_2 })
    expect(result.recordsReused).toBe(0)
  })

  it('rules across records hold over reused records: one given twice, byte for byte, stops the build, naming both repeats', async () => {
    const settled = await build(dataset, { now: NOW_2 })
    expect(settled.recordsReused).toBe(await jobCount(dataset.dataDir))
    let copied = { id: '', slug: '' }
    await editJobs(dataset.dataDir, (jobs) => {
      copied = jobs[3]!
      jobs.push(jobs[3]!)
    })
    try {
      const error = await build(dataset, { now: NOW_2, workers: 2, scanThread: true }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(DatasetInvalidError)
      expect((error as DatasetInvalidError).issues.map((issue) => `${issue.field}: ${issue.message}`)).toEqual([
        `id: duplicate job id "${copied.id}" (first seen at jobs.ndjson:4)`,
        `slug: duplicate job slug "${copied.slug}" (first seen at jobs.ndjson:4)`,
      ])
      expect(path.basename(await readlink(path.join(dataset.distDir, CURRENT_LINK)))).toBe(settled.snapshotId)
    } finally {
      await editJobs(dataset.dataDir, (jobs) => {
        jobs.pop()
      })
    }
  })

  it('rules across records hold over reused records: a new record taking a reused slug stops the build, naming both, publishing nothing', async () => {
    const settled = await build(dataset, { now: NOW_2 })
    expect(settled.recordsReused).toBe(await jobCount(dataset.dataDir))
    let takenSlug = ''
    await editJobs(dataset.dataDir, (jobs) => {
      takenSlug = jobs[5]!.slug
      jobs.push({ ...jobs[6]!, id: '00000000-0000-4000-8000-00000000dcba', slug: takenSlug })
      jobs[20]!.work_arrangement = 'on the moon'
    })
    const error = await build(dataset, { now: NOW_2, workers: 2, scanThread: true }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(DatasetInvalidError)
    const messages = (error as DatasetInvalidError).issues.map((issue) => `${issue.field}: ${issue.message}`)
    expect(messages).toEqual([
      expect.stringMatching(/^work_arrangement: /),
      expect.stringMatching(
        new RegExp(`^slug: duplicate job slug "${takenSlug}" \\(first seen at jobs\\.ndjson:6\\)$`),
      ),
    ])
    expect(path.basename(await readlink(path.join(dataset.distDir, CURRENT_LINK)))).toBe(settled.snapshotId)
    expect((await readdir(path.join(dataset.distDir, SNAPSHOTS_DIR))).filter((name) => name.startsWith('.'))).toEqual(
      [],
    )
  })
})
