/**
 * Datasets and snapshots for the refresh suites: a small generated dataset in
 * a private folder, made free of expiry dates (the servers under test run on
 * the wall clock, so a job expiring mid-test would change answers for a reason
 * that has nothing to do with refreshing), and helpers to edit it between
 * builds and read a snapshot's files back.
 */
import { readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { buildSnapshot, type BuildResult } from '../../../build/build.ts'
import { generateDataset } from '../../../build/generate.ts'
import { createProgress } from '../../../build/progress.ts'
import { SNAPSHOTS_DIR, SnapshotJobIndex, snapshotPaths, type SnapshotManifest } from '../../../core/snapshot.ts'
import { tempDir } from '../../support/fixtures.ts'

export interface RefreshDataset {
  root: string
  dataDir: string
  distDir: string
  cleanup(): Promise<void>
}

type RawJob = Record<string, unknown> & { id: string; slug: string; title: string; status: string }

export async function createDataset(
  options: { jobs?: number; companies?: number; seed?: number; prefix?: string } = {},
): Promise<RefreshDataset> {
  const root = await tempDir(options.prefix ?? 'refresh')
  const dataDir = path.join(root, 'data')
  const distDir = path.join(root, 'dist')
  await generateDataset({
    jobs: options.jobs ?? 300,
    companies: options.companies ?? 40,
    seed: options.seed ?? 11,
    outDir: dataDir,
  })
  await editJobs(dataDir, (jobs) => {
    for (const job of jobs) delete job.expires_at
  })
  return { root, dataDir, distDir, cleanup: () => rm(root, { recursive: true, force: true }) }
}

/** Reads jobs.ndjson, lets `edit` change the records in place, writes it back. */
export async function editJobs(dataDir: string, edit: (jobs: RawJob[]) => void): Promise<void> {
  const file = path.join(dataDir, 'jobs.ndjson')
  const jobs = (await readFile(file, 'utf8'))
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as RawJob)
  edit(jobs)
  await writeFile(file, `${jobs.map((job) => JSON.stringify(job)).join('\n')}\n`)
}

/** Reads companies.ndjson, lets `edit` change the records in place, writes it back. */
export async function editCompanies(
  dataDir: string,
  edit: (companies: (Record<string, unknown> & { id: string; name: string })[]) => void,
): Promise<void> {
  const file = path.join(dataDir, 'companies.ndjson')
  const companies = (await readFile(file, 'utf8'))
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown> & { id: string; name: string })
  edit(companies)
  await writeFile(file, `${companies.map((company) => JSON.stringify(company)).join('\n')}\n`)
}

/** Gives every job a title that names the revision, so every job file and v1 page differs per build. */
export async function retitleAll(dataDir: string, revision: number): Promise<void> {
  await editJobs(dataDir, (jobs) => {
    for (const job of jobs) job.title = `${job.title.replace(/ \(rev \d+\)$/, '')} (rev ${revision})`
  })
}

/** In-process build; `now` must increase from build to build (snapshot ids, and so rollback order, start with it). */
export async function build(
  dataset: RefreshDataset,
  options: { now?: Date; distDir?: string; keepSnapshots?: number; workers?: number } = {},
): Promise<BuildResult> {
  return buildSnapshot({
    dataDir: dataset.dataDir,
    distDir: options.distDir ?? dataset.distDir,
    siteUrl: 'https://jobsnap.example',
    now: options.now ?? new Date(),
    keepSnapshots: options.keepSnapshots ?? 10,
    workers: options.workers,
    progress: createProgress(process.stderr, true),
  })
}

export function snapshotDir(distDir: string, id: string): string {
  return path.join(distDir, SNAPSHOTS_DIR, id)
}

export async function readSnapshotFile(distDir: string, id: string, relativePath: string): Promise<Buffer> {
  return readFile(path.join(snapshotDir(distDir, id), relativePath))
}

export async function readManifest(distDir: string, id: string): Promise<SnapshotManifest> {
  return JSON.parse((await readSnapshotFile(distDir, id, snapshotPaths.manifest)).toString('utf8')) as SnapshotManifest
}

export async function readJobIndex(distDir: string, id: string): Promise<SnapshotJobIndex> {
  return SnapshotJobIndex.parse(
    JSON.parse((await readSnapshotFile(distDir, id, snapshotPaths.jobIndex)).toString('utf8')),
  )
}
