/**
 * `jobsnap build`: dataset -> validated snapshot on disk, published
 * atomically. See core/snapshot.ts for the layout it writes.
 */
import { createHash } from 'node:crypto'
import { V1Job, V2Job } from '../core/schema/api.ts'
import type { DatasetCompany } from '../core/schema/dataset.ts'
import {
  PRECOMPUTED_V1_LIMITS,
  SNAPSHOT_FORMAT,
  snapshotPaths,
  v1PageBody,
  v1UsageNotice,
  type IndexedCompany,
  type IndexedJob,
  type SnapshotJobIndex,
  type SnapshotManifest,
} from '../core/snapshot.ts'
import { mkdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { SnapshotManifest as ManifestSchema, CURRENT_LINK, indexFileHash, jsonArrayByLine, serializeJobIndex, serializeManifest } from '../core/snapshot.ts'
import { diffSnapshots, type SnapshotChanges } from './changes.ts'
import { SnapshotFileWriter, type PreviousSnapshot } from './file-writer.ts'
import { compareByDate, indexJob, salaryOrder, searchDocument, TermPostingsBuilder } from './index-jobs.ts'
import { DatasetInvalidError, type DatasetIssue } from './issues.ts'
import { loadDataset } from './load-dataset.ts'
import { PackedBodiesWriter } from './packed-bodies.ts'
import { buildOpenApiYaml } from './openapi.ts'
import { createProgress, type Progress } from './progress.ts'
import { createStagingDir, publishSnapshot, pruneSnapshots, unusedSnapshotId } from './publish.ts'
import { plainDescription, toV1Job, toV2Job } from './transform.ts'

export interface BuildOptions {
  dataDir: string
  distDir: string
  /** Public website named in the v1 usage notice. */
  siteUrl: string
  /** Decides which jobs have expired; defaults to the wall clock. */
  now?: Date
  /** Snapshots kept for rollback. */
  keepSnapshots?: number
  progress?: Progress
}

export interface BuildResult {
  snapshotId: string
  snapshotDir: string
  manifest: SnapshotManifest
  durationMs: number
  /** Against the snapshot that was published before this build. */
  changes: SnapshotChanges
  /** Public files written anew vs hard-linked unchanged from the previous snapshot. */
  filesRewritten: number
  filesReused: number
}

export const CHANGED_PATHS_FILE = 'changed-paths.txt'

/** The published snapshot's folder and file hashes, when there is a readable one to reuse from. */
async function previousSnapshot(distDir: string): Promise<PreviousSnapshot | undefined> {
  const dir = path.join(distDir, CURRENT_LINK)
  try {
    const manifest = ManifestSchema.parse(JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8')))
    return { dir, hashes: manifest.files }
  } catch {
    return undefined
  }
}

function snapshotIdFor(builtAt: Date, hashes: Record<string, string>): string {
  const digest = createHash('sha256')
  for (const [file, hash] of Object.entries(hashes)) digest.update(`${file}\0${hash}\n`)
  const stamp = builtAt.toISOString().replace(/[-:]/g, '').replace('.', '')
  return `${stamp}-${digest.digest('hex').slice(0, 8)}`
}

/** Builds and publishes a snapshot. Throws DatasetInvalidError (publishing nothing) when the dataset is bad. */
export async function buildSnapshot(options: BuildOptions): Promise<BuildResult> {
  const started = performance.now()
  const progress = options.progress ?? createProgress(process.stderr, true)
  const now = options.now ?? new Date()

  const dataset = await loadDataset(options.dataDir, { onProgress: (kind, count) => progress.step(`reading ${kind}`, count) })
  const companies = new Map<string, DatasetCompany>(dataset.companies.map((c) => [c.id, c]))

  const live = dataset.jobs.filter((job) => job.status === 'live' && (job.expires_at === undefined || Date.parse(job.expires_at) > now.getTime()))
  const closed = dataset.jobs.filter((job) => job.status === 'closed').length
  // Parse each timestamp once: a comparator that parses costs O(n log n) Date.parse calls.
  const postedAt = new Map(live.map((job) => [job, Date.parse(job.posted_at)]))
  live.sort((a, b) => compareByDate({ posted_at: postedAt.get(a)!, id: a.id }, { posted_at: postedAt.get(b)!, id: b.id }))
  progress.log(`dataset: ${dataset.jobs.length} job records (${live.length} live), ${dataset.companies.length} companies`)

  const provisionalId = `${now.getTime()}`
  const stagingDir = await createStagingDir(options.distDir, provisionalId)
  const previous = await previousSnapshot(options.distDir)
  const writer = new SnapshotFileWriter(stagingDir, previous)
  await mkdir(path.join(stagingDir, path.dirname(snapshotPaths.v2Bodies.bodies)), { recursive: true })
  const packedV2 = new PackedBodiesWriter(stagingDir, snapshotPaths.v2Bodies)
  const packedV1 = new PackedBodiesWriter(stagingDir, snapshotPaths.v1Bodies)
  // The writer owns worker threads: stopped whether the build succeeds or throws.
  try {
    const usage = v1UsageNotice(options.siteUrl)

    const issues: DatasetIssue[] = []
    const v1Serialized: string[] = []
    const indexed: IndexedJob[] = []
    const liveByCompany = new Map<string, number>()
    const textIndex = new TermPostingsBuilder()

    for (const [position, job] of live.entries()) {
      const company = companies.get(job.company_id)!
      const v2 = toV2Job(job, company)
      const v1 = toV1Job(job, company, v2)
      // The output schemas are the contract: a record that cannot be served exactly is a dataset error, not a surprise for a client.
      for (const [shape, schema, value] of [['v2', V2Job, v2], ['v1', V1Job, v1]] as const) {
        const checked = schema.safeParse(value)
        if (!checked.success) {
          for (const issue of checked.error.issues) {
            issues.push({ source: { file: `job ${job.slug}` }, recordId: job.id, field: issue.path.join('.'), message: `cannot be served as ${shape}: ${issue.message}` })
          }
        }
      }
      const v2Body = Buffer.from(JSON.stringify(v2))
      const v1Body = JSON.stringify(v1)
      const hash = await writer.writePublic(snapshotPaths.v2Job(job.slug), v2Body)
      packedV2.add(v2Body)
      packedV1.add(Buffer.from(v1Body))
      v1Serialized.push(v1Body)
      indexed.push(indexJob(job, dataset.rates, hash))
      textIndex.add(position, searchDocument(v2, company))
      liveByCompany.set(company.id, (liveByCompany.get(company.id) ?? 0) + 1)
      if (position % 1000 === 0) progress.step('writing jobs', position, live.length)
    }
    progress.step('writing jobs', live.length, live.length)
    if (issues.length > 0) throw new DatasetInvalidError(issues)

    for (const limit of PRECOMPUTED_V1_LIMITS) {
      const pages = Math.max(1, Math.ceil(live.length / limit))
      for (let page = 1; page <= pages; page++) {
        const slice = v1Serialized.slice((page - 1) * limit, page * limit)
        await writer.writePublic(snapshotPaths.v1Page(limit, page), v1PageBody(usage, page, limit, live.length, slice))
      }
    }
    await writer.writePublic(snapshotPaths.openapi, buildOpenApiYaml())

    const indexHashes: Record<string, string> = {}
    const writeIndexFile = async (relativePath: string, body: string | Buffer) => {
      indexHashes[relativePath] = indexFileHash(body)
      await writer.writePrivate(relativePath, body)
    }
    const jobIndex: SnapshotJobIndex = { jobs: indexed, salary_order: salaryOrder(indexed) }
    await writeIndexFile(snapshotPaths.jobIndex, serializeJobIndex(jobIndex))
    progress.log('writing search index')
    const { terms, postings } = textIndex.serialize()
    await writeIndexFile(snapshotPaths.searchTerms, JSON.stringify(terms))
    await writeIndexFile(snapshotPaths.searchPostings, postings)
    const companyIndex: IndexedCompany[] = dataset.companies.map((company) => {
      const { description_html: _html, total_raised: _raised, description: _text, ...published } = company
      const description = plainDescription(company)
      return { ...published, ...(description ? { description } : {}), live_jobs: liveByCompany.get(company.id) ?? 0 }
    })
    await writeIndexFile(snapshotPaths.companies, jsonArrayByLine(companyIndex))
    for (const [packed, paths] of [[packedV2, snapshotPaths.v2Bodies], [packedV1, snapshotPaths.v1Bodies]] as const) {
      const { lengths, bodiesHash } = packed.finish()
      indexHashes[paths.bodies] = bodiesHash
      await writeIndexFile(paths.lengths, lengths)
    }
    await writer.flush()

    const snapshotId = await unusedSnapshotId(options.distDir, snapshotIdFor(now, writer.hashes))
    const manifest: SnapshotManifest = {
      format: SNAPSHOT_FORMAT,
      snapshot_id: snapshotId,
      built_at: now.toISOString(),
      site_url: options.siteUrl,
      rates_as_of: dataset.rates.as_of,
      counts: {
        records_jobs: dataset.jobs.length,
        live_jobs: live.length,
        closed_jobs: closed,
        expired_jobs: dataset.jobs.length - live.length - closed,
        companies: dataset.companies.length,
      },
      v1_limits: [...PRECOMPUTED_V1_LIMITS],
      files: writer.hashes,
      index_hashes: indexHashes,
    }
    const changes = diffSnapshots(previous?.hashes, writer.hashes)
    await writer.writePrivate(CHANGED_PATHS_FILE, changes.purge.join('\n') + (changes.purge.length ? '\n' : ''))
    // The manifest goes last: a snapshot folder without one is incomplete by definition.
    await writer.writePrivate(snapshotPaths.manifest, serializeManifest(manifest))
    const snapshotDir = await publishSnapshot(options.distDir, stagingDir, snapshotId)
    await pruneSnapshots(options.distDir, options.keepSnapshots ?? 3)
    progress.done()
    return { snapshotId, snapshotDir, manifest, durationMs: performance.now() - started, changes, filesRewritten: writer.rewritten, filesReused: writer.reused }
  } finally {
    packedV2.close()
    packedV1.close()
    await writer.close()
  }
}
