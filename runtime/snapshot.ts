/**
 * Loading a published snapshot into memory: manifest and indexes verified
 * with the same zod schemas the build wrote them with, the full-text postings
 * loaded as one typed array (never re-indexed), public files read on demand
 * through a bounded cache.
 */
import { readFileSync } from 'node:fs'
import { readFile, realpath } from 'node:fs/promises'
import path from 'node:path'
import { LRUCache } from 'lru-cache'
import { SerializedTerms } from '../core/search.ts'
import {
  CURRENT_LINK,
  SnapshotCompanies,
  SnapshotJobIndex,
  SnapshotManifest,
  snapshotPaths,
  type IndexedCompany,
} from '../core/snapshot.ts'
import { JobIndex } from './query/job-index.ts'
import { TextIndex } from './query/text-index.ts'

export interface LoadedSnapshot {
  id: string
  dir: string
  manifest: SnapshotManifest
  jobs: JobIndex
  text: TextIndex
  companies: IndexedCompany[]
  companyById: Map<string, IndexedCompany>
  /** Reads a public file (identity or a precompressed copy) through the shared cache. */
  readPublic(relativePath: string, encoding?: 'br' | 'gzip'): Promise<Buffer | undefined>
}

/** Bounded by bytes and shared by every loaded snapshot (keys hold the snapshot folder). */
export interface FileCache {
  get(key: string): Buffer | undefined
  set(key: string, value: Buffer): unknown
}

export function createFileCache(maxBytes: number): FileCache {
  if (maxBytes <= 0) return { get: () => undefined, set: () => undefined }
  return new LRUCache<string, Buffer>({ maxSize: maxBytes, sizeCalculation: (buffer) => Math.max(1, buffer.length) })
}

async function readJson(dir: string, file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path.join(dir, file), 'utf8'))
  } catch (error) {
    throw new Error(`snapshot ${dir}: cannot read ${file}: ${(error as Error).message}`)
  }
}

function verified<T>(schema: { safeParse(value: unknown): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } } }, value: unknown, what: string): T {
  const parsed = schema.safeParse(value)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    throw new Error(`${what} is invalid at ${issue.path.join('.') || '(root)'}: ${issue.message}`)
  }
  return parsed.data
}

/** Resolves `<dist>/current` to a snapshot folder, or throws when nothing is published. */
export async function resolveCurrentSnapshot(distDir: string): Promise<string> {
  try {
    return await realpath(path.join(distDir, CURRENT_LINK))
  } catch {
    throw new Error(`no snapshot published in ${distDir} (run \`npm run build\` first)`)
  }
}

/** Loads and verifies a snapshot folder fully before anything serves from it. */
export async function loadSnapshot(dir: string, fileCache: FileCache): Promise<LoadedSnapshot> {
  const manifest = verified(SnapshotManifest, await readJson(dir, snapshotPaths.manifest), `${dir}/manifest.json`)
  const [jobIndexRaw, companiesRaw, termsRaw, postingsBytes] = await Promise.all([
    readJson(dir, snapshotPaths.jobIndex),
    readJson(dir, snapshotPaths.companies),
    readJson(dir, snapshotPaths.searchTerms),
    readFile(path.join(dir, snapshotPaths.searchPostings)),
  ])
  const jobIndex = verified(SnapshotJobIndex, jobIndexRaw, `${dir}/${snapshotPaths.jobIndex}`)
  if (jobIndex.jobs.length !== manifest.counts.live_jobs) {
    throw new Error(`${dir}: index has ${jobIndex.jobs.length} jobs, manifest says ${manifest.counts.live_jobs}`)
  }
  const companies = verified(SnapshotCompanies, companiesRaw, `${dir}/${snapshotPaths.companies}`)
  const postings = new Uint32Array(postingsBytes.length / 4)
  for (let i = 0; i < postings.length; i++) postings[i] = postingsBytes.readUInt32LE(i * 4)
  if (postings.some((p) => p >= jobIndex.jobs.length)) throw new Error(`${dir}: text index points past the last job`)
  const text = new TextIndex(verified(SerializedTerms, termsRaw, `${dir}/${snapshotPaths.searchTerms}`), postings, jobIndex.jobs.length)

  // Snapshot paths are built from validated names (never from raw input), so plain concatenation is safe.
  const root = dir.endsWith(path.sep) ? dir : dir + path.sep
  const readPublic = async (relativePath: string, encoding?: 'br' | 'gzip') => {
    const full = root + relativePath + (encoding === 'br' ? '.br' : encoding === 'gzip' ? '.gz' : '')
    const cached = fileCache.get(full)
    if (cached) return cached
    try {
      // Synchronous on purpose: these are small files the page cache holds, read in microseconds;
      // fs/promises' open/stat/read/close through the thread pool cost ~4 round trips and halved throughput.
      const bytes = readFileSync(full)
      fileCache.set(full, bytes)
      return bytes
    } catch {
      return undefined
    }
  }

  return {
    id: manifest.snapshot_id,
    dir,
    manifest,
    jobs: new JobIndex(jobIndex),
    text,
    companies,
    companyById: new Map(companies.map((c) => [c.id, c])),
    readPublic,
  }
}
