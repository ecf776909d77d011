/**
 * A built snapshot's job index as tests and benches need it, read from
 * index/jobs.bin (what a server loads; builds no longer write index/jobs.json):
 * per position in date order the job's slug, id, content hash, posting date
 * and top of salary range, the salary order, and how many jobs carry each tag.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { readJobIndexFile, snapshotPaths, textAt } from '../core/index.ts'

interface SnapshotJobEntry {
  slug: string
  id: string
  hash: string
  /** Epoch ms. */
  posted_at: number
  /** Annualised USD; null for none. */
  salary_high: number | null
}

export interface SnapshotJobEntries {
  jobs: SnapshotJobEntry[]
  /** Positions, highest salary first. */
  salary_order: number[]
  /** Tag (lowercased, as the index keys it) -> jobs carrying it, in the order the tags first appear. */
  tagCounts: Map<string, number>
}

const TAG_KEY = 'tag:'

/** Reads `<snapshotDir>/index/jobs.bin`. */
export async function readSnapshotJobIndex(snapshotDir: string): Promise<SnapshotJobEntries> {
  const what = path.join(snapshotDir, snapshotPaths.jobIndexBinary)
  const file = readJobIndexFile(await readFile(what), what)
  const jobs = Array.from({ length: file.size }, (_, p) => ({
    slug: textAt(file.slugs, p),
    id: textAt(file.ids, p),
    hash: textAt(file.hashes, p),
    posted_at: file.postedAt[p]!,
    salary_high: Number.isNaN(file.salaryHigh[p]!) ? null : file.salaryHigh[p]!,
  }))
  const tagCounts = new Map<string, number>()
  for (const [key, positions] of file.postings)
    if (key.startsWith(TAG_KEY)) tagCounts.set(key.slice(TAG_KEY.length), positions.length)
  return { jobs, salary_order: [...file.salaryOrder], tagCounts }
}
