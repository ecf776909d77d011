/**
 * Datasets and snapshots for the refresh suites: a small generated dataset in
 * a private folder, made free of expiry dates (the servers under test run on
 * the wall clock, so a job expiring mid-test would change answers for a reason
 * that has nothing to do with refreshing), and helpers to edit it between
 * builds and read a snapshot's files back.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { type BuildResult, buildSnapshot, createProgress } from '../../../build/index.ts'
import { jobFileOnDisk, openPackedBodies, SNAPSHOTS_DIR, snapshotPaths } from '../../../core/index.ts'
import { readSnapshotJobIndex, type SnapshotJobEntries } from '../../../support/job-index.ts'
import { editNdjson, type GeneratedDataset, generatedDataset, type RawJob } from '../../support/fixtures.ts'

export type RefreshDataset = GeneratedDataset

/** A small generated dataset whose jobs never expire. */
export async function createDataset(
  options: { jobs?: number; companies?: number; seed?: number; prefix?: string } = {},
): Promise<RefreshDataset> {
  return generatedDataset({
    jobs: 300,
    companies: 40,
    seed: 11,
    prefix: 'refresh',
    ...options,
    editJobs: (jobs) => {
      for (const job of jobs) delete job.expires_at
    },
  })
}

/** Reads jobs.ndjson, lets `edit` change the records in place, writes it back. */
export function editJobs(dataDir: string, edit: (jobs: RawJob[]) => void): Promise<void> {
  return editNdjson(path.join(dataDir, 'jobs.ndjson'), edit)
}

/** Reads companies.ndjson, lets `edit` change the records in place, writes it back. */
export function editCompanies(
  dataDir: string,
  edit: (companies: (Record<string, unknown> & { id: string; name: string })[]) => void,
): Promise<void> {
  return editNdjson(path.join(dataDir, 'companies.ndjson'), edit)
}

/** Gives every job a title that names the revision, so every job file and v1 page differs per build. */
export async function retitleAll(dataDir: string, revision: number): Promise<void> {
  await editJobs(dataDir, (jobs) => {
    for (const job of jobs) job.title = `${job.title.replace(/ \(rev \d+\)$/, '')} (rev ${revision})`
  })
}

/** In-process build; give each build of one dist folder its own `now` (snapshot ids start with it). */
export async function build(
  dataset: RefreshDataset,
  options: {
    now?: Date
    distDir?: string
    keepSnapshots?: number
    workers?: number
    scanThread?: boolean
    jobDeltaMaxPercent?: number
    /** Default 0 here: every rebuild whose job files are a delta writes its packed bodies as one too. */
    bodiesDeltaMinBytes?: number
    legacyJobIndex?: boolean
  } = {},
): Promise<BuildResult> {
  return buildSnapshot({
    dataDir: dataset.dataDir,
    distDir: options.distDir ?? dataset.distDir,
    siteUrl: 'https://jobsnap.example',
    now: options.now ?? new Date(),
    keepSnapshots: options.keepSnapshots ?? 10,
    workers: options.workers,
    scanThread: options.scanThread,
    jobDeltaMaxPercent: options.jobDeltaMaxPercent,
    bodiesDeltaMinBytes: options.bodiesDeltaMinBytes ?? 0,
    legacyJobIndex: options.legacyJobIndex,
    progress: createProgress(process.stderr, true),
  })
}

export function snapshotDir(distDir: string, id: string): string {
  return path.join(distDir, SNAPSHOTS_DIR, id)
}

/** A snapshot's file; a job file is looked up through the snapshot's layers, as a front does (core/job-layers.ts). */
export async function readSnapshotFile(distDir: string, id: string, relativePath: string): Promise<Buffer> {
  return readFile(await snapshotFilePath(distDir, id, relativePath))
}

/** Where a snapshot's file is on disk: a job file through the layers (a path that does not exist when it is gone). */
export async function snapshotFilePath(distDir: string, id: string, relativePath: string): Promise<string> {
  const own = path.join(snapshotDir(distDir, id), relativePath)
  if (!relativePath.startsWith('v2/jobs/') || !relativePath.endsWith('.json')) return own
  return jobFileOnDisk(snapshotDir(distDir, id), relativePath) ?? own
}

/** The snapshot's job index, from its index/jobs.bin. */
export function readJobIndex(distDir: string, id: string): Promise<SnapshotJobEntries> {
  return readSnapshotJobIndex(snapshotDir(distDir, id))
}

/** A snapshot's packed bodies, v2 then v1 (whole, or a delta and its base: core/packed-bodies.ts). */
export const PACKED_BODIES = [snapshotPaths.v2Bodies, snapshotPaths.v1Bodies]

/** Every packed body of a snapshot, in position order, joined by commas (what a whole file holds), v2 then v1. */
export function packedBodiesOf(dir: string): Buffer[] {
  return PACKED_BODIES.map((paths) => {
    const packed = openPackedBodies(dir, paths)
    try {
      return packed.range(0, packed.size)
    } finally {
      packed.close()
    }
  })
}
