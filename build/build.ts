/**
 * `jobsnap build`: dataset -> validated snapshot on disk, published
 * atomically. See core/snapshot.ts for the layout it writes.
 *
 * Two passes, so that memory stays bounded at a million jobs:
 * 1. Check: every job record is read as text and either found unchanged in
 *    the previous build's cache (record-cache.ts) or parsed, validated and
 *    transformed on a worker thread (record-pool.ts), whose outputs go to a
 *    spill file. Only a small summary per record stays in memory; the rules
 *    across records (unique ids and slugs) run over those.
 * 2. Write: the live jobs in date order, each one's bodies read back (from
 *    the spill, or from the previous snapshot's packed bodies), streamed into
 *    the per-job files, the packed bodies, the v1 pages, the job index, the
 *    text index and the next build's cache. Reused jobs that were consecutive
 *    in the previous snapshot go as a run: one read of their bodies, their
 *    cache lines copied as ranges, their jobs.bin records copied, not parsed.
 */
import { CHANGED_PATHS_FILE, CHANGED_TAGS_FILE } from './changed-files.ts'
import { DEFAULTS } from '../core/config.ts'
import { createHash } from 'node:crypto'
import { closeSync, existsSync, fstatSync, openSync, readFileSync, statSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { mkdir, open, readdir, readFile, rm, stat, symlink } from 'node:fs/promises'
import path from 'node:path'
import { z } from 'zod'
import { bodiesBaseId, openPackedBodies, uint32View } from '../core/packed-bodies.ts'
import type { V1Job, V2Job } from '../core/schema/api.ts'
import type { DatasetCompany } from '../core/schema/dataset.ts'
import { toV2CompanyProfile } from '../core/company.ts'
import { SerializedTerms } from '../core/search.ts'
import { indexFileHash } from '../core/content-hash.ts'
import { serializeCompanyColumns } from '../core/company-columns.ts'
import {
  JOB_BASE_LINK,
  JOB_BASE_HASHES,
  JOB_DELTA_LIST,
  JOB_FILES_DIR,
  JOB_WHITEOUTS,
  jobBaseTarget,
  jobLayerBase,
} from '../core/job-layers.ts'
import {
  fileIdentity,
  identitiesOf,
  isVerified,
  readVerifiedFiles,
  recordVerifiedFiles,
  type VerifiedFiles,
} from '../core/verified-files.ts'
import { JobIndexFileWriter, PreviousJobIndex, readJobIndexFile } from '../core/job-index-file.ts'
import {
  CURRENT_LINK,
  PRECOMPUTED_V1_LIMITS,
  SNAPSHOT_FORMAT,
  SNAPSHOTS_DIR,
  SnapshotManifestHead,
  jsonArrayByLine,
  serializeManifest,
  snapshotPaths,
  v1PageFrame,
  v1UsageNotice,
  type IndexedCompany,
  type IndexedJob,
  type PackedBodiesPaths,
  type SnapshotManifest,
  bodiesBaseTarget,
} from '../core/snapshot.ts'
import { BufferedFileWriter } from './buffered-file.ts'
import { changedCompanies, changedTags, diffSnapshots, jobChanges, type SnapshotChanges } from './changes.ts'
import { SnapshotFileWriter, type PreviousSnapshot } from './file-writer.ts'
import { JobFileList, JobFileListBuilder, jobFileSlug } from './job-files.ts'
import { salaryOrder, TermPostingsBuilder } from './index-jobs.ts'
import { DatasetInvalidError, type DatasetIssue, type RecordSource } from './issues.ts'
import { isLiveAt, parseMeta, type RecordSummary } from './job-record.ts'
import { loadRates, missingRecordsIssue, UniqueKeys } from './load-dataset.ts'
import { PackedBodiesWriter, type PreviousBodies } from './packed-bodies.ts'
import { prefetchFiles } from './prefetch.ts'
import { ExportsWriter } from './exports.ts'
import { WriteThread } from './write-thread.ts'
import { buildOpenApiYaml, type OpenApiExamples } from './openapi.ts'
import { createProgress, type Progress } from './progress.ts'
import { acquirePublishLock, createStagingDir, publishSnapshot, pruneSnapshots, unusedSnapshotId } from './publish.ts'
import {
  BuildCacheReader,
  CachedRecord,
  CacheLineFields,
  CompanyHashTable,
  buildContextHash,
  cacheHeader,
  cacheLine,
} from './record-cache.ts'
import type { RecordOutcome, Spilled } from './record-batch.ts'
import { RecordPool } from './record-pool.ts'
import { findDatasetFiles } from './read-dataset.ts'
import { keyAt, loadCompanyContext, ScanThread, type ScannedBatch, scanRecords, sourceAt } from './record-scan.ts'
import { plainDescription } from './transform.ts'

export interface BuildOptions {
  dataDir: string
  distDir: string
  /** Public website named in the v1 usage notice. */
  siteUrl: string
  /** Decides which jobs have expired; defaults to the wall clock. */
  now?: Date
  /** Snapshots kept for rollback. */
  keepSnapshots?: number
  /**
   * Worker threads for the per-record work; 0 does it on the build's own
   * thread. Default: one per core once the job files reach
   * IN_PROCESS_MAX_BYTES, else 0 (starting a worker costs more than a small
   * dataset takes).
   */
  workers?: number
  progress?: Progress
  /**
   * Read, hash and look up the job records on a thread of their own
   * (record-scan.ts). Default: once the job files reach SCAN_THREAD_MIN_BYTES.
   */
  scanThread?: boolean
  /** Rows per row group of jobs.parquet (default PARQUET_ROW_GROUP_ROWS); tests use small ones. */
  parquetRowGroupRows?: number
  /**
   * The job files are a delta over the last full layer (core/job-layers.ts) while it stays within this
   * percentage of the live jobs; 0: always a full layer. Default: JOBSNAP_JOB_DELTA_MAX_PERCENT's.
   */
  jobDeltaMaxPercent?: number
  /**
   * Packed bodies at least this large are a delta over the last whole ones when the job files are
   * (default BODIES_DELTA_MIN_BYTES, 256 MB); tests use 0.
   */
  bodiesDeltaMinBytes?: number
  /**
   * Also write index/jobs.json, the job index as builds before index/jobs.bin wrote it (431 MB at 1M
   * jobs that no server of this code reads): tests make the snapshots of older builds with it.
   */
  legacyJobIndex?: boolean
}

export interface BuildResult {
  snapshotId: string
  snapshotDir: string
  manifest: SnapshotManifest
  /** Every public file's content hash: the manifest's `files` and the per-job files of index/job-files.txt. */
  files: ReadonlyMap<string, string>
  durationMs: number
  /** Against the snapshot that was published before this build. */
  changes: SnapshotChanges
  /** The cache tags it made stale (changed-tags.txt). */
  changedTags: string[]
  /** Public files written anew vs hard-linked unchanged from the previous snapshot. */
  filesRewritten: number
  filesReused: number
  /**
   * The snapshot whose full layer of job files this one's are a delta over (undefined: a full layer of
   * its own), the job files left there (not put on disk), and the whiteouts written (among filesRewritten).
   */
  jobBase: string | undefined
  jobFilesInBase: number
  jobWhiteouts: number
  /** Job records whose checks and outputs were reused from the previous build's cache. */
  recordsReused: number
  /** Gzip members of jobs.ndjson.gz copied from the previous snapshot's, of all its members. */
  exportMembersReused: number
  exportMembers: number
  /** Column chunks of jobs.parquet copied from the previous snapshot's, of all its chunks. */
  parquetChunksReused: number
  parquetChunks: number
  /** What writing the bulk exports added to the build's wall time (ExportsStats.busyMs). */
  exportsMs: number
}

/** One entry a line, each ended by a newline; nothing at all for none. */
const linesOf = (entries: readonly string[]): string => entries.map((entry) => `${entry}\n`).join('')

/**
 * The published snapshot's companies as written (keys in the order written, so
 * an unchanged one serializes to the same text), to tell which profiles
 * changed; undefined when they cannot be read (every company then counts as changed).
 */
async function previousCompanies(dir: string): Promise<{ slug: string }[] | undefined> {
  try {
    const parsed: unknown = JSON.parse(await readFile(path.join(dir, snapshotPaths.companies), 'utf8'))
    return Array.isArray(parsed) && parsed.every((company) => typeof company?.slug === 'string') ? parsed : undefined
  } catch {
    return undefined
  }
}

/**
 * The published snapshot's folder and file hashes, when there is a readable
 * one to reuse from. The manifest's head goes through its schema; its file
 * map through a plain loop; its job files' list is kept as it is (job-files.ts).
 */
async function previousSnapshot(distDir: string): Promise<PreviousSnapshot | undefined> {
  const dir = path.join(distDir, CURRENT_LINK)
  try {
    const { files, ...head } = JSON.parse(await readFile(path.join(dir, snapshotPaths.manifest), 'utf8')) as {
      files?: unknown
    }
    // Any format: a snapshot of the previous format (the first build after an upgrade) still links the change
    // feed and lends its unchanged public files, whose bytes no format change has touched.
    const parsedHead = SnapshotManifestHead.extend({
      format: z.int(),
      exports: z.unknown(),
      job_files: SnapshotManifestHead.shape.job_files.optional(),
    }).safeParse(head)
    if (!parsedHead.success || typeof files !== 'object' || files === null || Array.isArray(files)) return undefined
    // One walk over the map both checks it and picks out the job files (which a format 4 manifest lists).
    const listedFiles = files as Record<string, unknown>
    const hashes = new Map<string, string>()
    const listedJobs: [string, string][] = []
    for (const file in listedFiles) {
      const hash = listedFiles[file]
      if (typeof hash !== 'string') return undefined
      const slug = jobFileSlug(file)
      if (slug !== undefined) listedJobs.push([slug, hash])
      else hashes.set(file, hash)
    }
    const listed = parsedHead.data.job_files
    const jobFiles =
      listed === undefined
        ? JobFileList.of(listedJobs)
        : await readFile(path.join(dir, snapshotPaths.jobFiles)).then(
            (bytes) => (listedJobs.length === 0 ? JobFileList.read(bytes, listed) : undefined),
            () => undefined,
          )
    if (jobFiles === undefined) return undefined
    const jobDelta = await jobDeltaOf(distDir, dir)
    return {
      id: parsedHead.data.snapshot_id,
      dir,
      hashes,
      jobFiles,
      indexHashes: parsedHead.data.index_hashes ?? {},
      liveJobs: parsedHead.data.counts.live_jobs,
      siteUrl: parsedHead.data.site_url,
      ...(jobDelta ? { jobDelta } : {}),
    }
  } catch {
    return undefined
  }
}

/** When a snapshot's job files are a delta (core/job-layers.ts): its base, and the files and whiteouts it holds itself. */
async function jobDeltaOf(distDir: string, dir: string): Promise<PreviousSnapshot['jobDelta']> {
  const baseId = await jobLayerBase(dir)
  if (baseId === undefined) return undefined
  const names = (folder: string) => readdir(path.join(dir, folder)).catch(() => [] as string[])
  // Its list of what it holds; the folder's entries only when the list cannot be read.
  const listed = await readFile(path.join(dir, JOB_DELTA_LIST), 'utf8').then(
    (text) => text.split('\n').filter((line) => line !== ''),
    async () => (await names(JOB_FILES_DIR)).map((name) => `${JOB_FILES_DIR}/${name}`),
  )
  const baseHashes = await readFile(path.join(dir, JOB_BASE_HASHES), 'utf8').then(
    (text) => {
      const bySlug = new Map<string, string>()
      for (const line of text.split('\n')) {
        const tab = line.indexOf('\t')
        if (tab > 0) bySlug.set(line.slice(0, tab), line.slice(tab + 1))
      }
      return bySlug
    },
    () => undefined,
  )
  return {
    baseId,
    baseDir: path.join(distDir, SNAPSHOTS_DIR, baseId),
    own: new Set(listed),
    gone: new Set(await names(JOB_WHITEOUTS)),
    ...(baseHashes ? { baseHashes } : {}),
  }
}

/**
 * The base whose full layer of job files this build's are to be a delta over (core/job-layers.ts),
 * or undefined for a full layer of its own: the previous snapshot's base (or the previous snapshot,
 * when its layer is full), while it is on disk and the delta stays within `maxPercent` of the live
 * jobs. The delta's size is bounded before any file is written: the previous delta's files and
 * whiteouts, the live jobs not reused unchanged from the previous build, and the previous live jobs
 * that are not among those reused (removed or changed).
 */
async function jobDeltaBase(
  previous: PreviousSnapshot | undefined,
  live: number,
  reusedLive: number,
  maxPercent: number,
): Promise<string | undefined> {
  if (previous === undefined || maxPercent <= 0 || live === 0) return undefined
  const delta = previous.jobDelta
  const bound =
    (delta ? delta.own.size + delta.gone.size : 0) + (live - reusedLive) + ((previous.liveJobs ?? 0) - reusedLive)
  if (bound * 100 > live * maxPercent) return undefined
  if (delta === undefined) return previous.id
  const baseThere = await stat(path.join(delta.baseDir, JOB_FILES_DIR)).then(
    (found) => found.isDirectory(),
    () => false,
  )
  return baseThere ? delta.baseId : undefined
}

function snapshotIdFor(builtAt: Date, hashes: ReadonlyMap<string, string>, jobLines: readonly Buffer[]): string {
  const digest = createHash('sha256')
  // Tens of thousands of entries at 1M jobs: hashed a few thousand at a time rather than one native call each.
  let pending = ''
  for (const [file, hash] of hashes) {
    pending += `${file}\0${hash}\n`
    if (pending.length > 1 << 16) {
      digest.update(pending)
      pending = ''
    }
  }
  digest.update(pending)
  for (const part of jobLines) digest.update(part)
  const stamp = builtAt.toISOString().replace(/[-:]/g, '').replace('.', '')
  return `${stamp}-${digest.digest('hex').slice(0, 8)}`
}

/**
 * With a previous build's cache, the first this many records to check afresh are checked on the
 * build's own thread, the workers started only for more: starting them costs about as much
 * CPU as checking this many (and a 1% change at 100k jobs is half of it).
 */
const IN_PROCESS_FIRST_RECORDS = 2048

/** Job files smaller than this (~7k records) are done on the build's own thread by default. */
const IN_PROCESS_MAX_BYTES = 8 << 20

/**
 * Job files from this size (~200k records) are scanned on a thread of their own: below it, the thread's
 * start (~0.5 s of CPU under tsx, on the core the exports thread is starting on) outweighs what it takes
 * off the build's own thread, and a loaded machine (a rebuild beside the server under traffic) pays it twice.
 */
const SCAN_THREAD_MIN_BYTES = 256 << 20

/**
 * Builds and publishes a snapshot. Throws DatasetInvalidError (publishing
 * nothing) when the dataset is bad, and an Error when another build or a
 * rollback is publishing into the same folder.
 */
export async function buildSnapshot(options: BuildOptions): Promise<BuildResult> {
  const isFolder = await stat(options.dataDir).then(
    (found) => found.isDirectory(),
    () => false,
  )
  if (!isFolder)
    throw new DatasetInvalidError([
      { source: { file: options.dataDir }, message: 'no such data folder (set it with --data or JOBSNAP_DATA)' },
    ])
  const release = await acquirePublishLock(options.distDir, 'build', true)
  try {
    return await buildLocked(options)
  } finally {
    await release()
  }
}

async function buildLocked(options: BuildOptions): Promise<BuildResult> {
  const started = performance.now()
  const progress = options.progress ?? createProgress(process.stderr, true)
  const now = options.now ?? new Date()
  const nowMs = now.getTime()

  const issues: DatasetIssue[] = []
  const rates = await loadRates(options.dataDir, issues)
  const contextHash = rates ? await buildContextHash(rates) : undefined
  const files = await findDatasetFiles(options.dataDir, 'jobs')
  const totalBytes = (await Promise.all(files.map((file) => stat(path.join(options.dataDir, file))))).reduce(
    (sum, s) => sum + s.size,
    0,
  )
  // Started before the companies and the previous manifest load: it loads the former while this thread reads
  // the latter, then reads and looks up the job records.
  const scanThread =
    (options.scanThread ?? totalBytes >= SCAN_THREAD_MIN_BYTES)
      ? new ScanThread(
          options.dataDir,
          files,
          contextHash
            ? { file: path.join(options.distDir, CURRENT_LINK, snapshotPaths.buildCache), contextHash }
            : undefined,
        )
      : undefined
  // The previous manifest first: the scanning thread loads the companies meanwhile.
  const previous = await previousSnapshot(options.distDir)
  // What pass 2 reads of the previous snapshot, into the page cache while pass 1 runs (prefetch.ts): its v1
  // bodies (the changed v1 pages are made from them) through their layers; its v2 bodies only where they are
  // copied, not when they stay in a base (1.6 GB at 1M that a layered rebuild reads a few bodies of).
  const prefetch = previous
    ? prefetchFiles(
        [
          snapshotPaths.jobIndexBinary,
          snapshotPaths.searchPostings,
          snapshotPaths.v1Bodies.bodies,
          snapshotPaths.v1Bodies.base,
          ...(v2BodiesCopied(previous.dir, options.bodiesDeltaMinBytes ?? BODIES_DELTA_MIN_BYTES)
            ? [snapshotPaths.v2Bodies.bodies]
            : []),
        ].map((file) => path.join(previous.dir, file)),
      )
    : undefined
  const {
    companies,
    hashes: companyHashes,
    issues: companyIssues,
  } = await (scanThread?.companies ?? loadCompanyContext(options.dataDir))
  issues.push(...companyIssues)
  const companyIndex = new Map(companies.map((company, index) => [company.id, index]))
  // A reused record's bodies are read back from the previous snapshot's: without them (a base deleted by hand),
  // nothing is reused and the bodies are written whole.
  const cache =
    previous && contextHash && previousBodiesThere(previous.dir)
      ? await (scanThread?.cache ??
          BuildCacheReader.open(path.join(previous.dir, snapshotPaths.buildCache), contextHash))
      : undefined
  const threads = options.workers ?? (totalBytes >= IN_PROCESS_MAX_BYTES ? availableParallelism() : 0)

  const stagingDir = await createStagingDir(options.distDir, `${nowMs}`)
  const records = new RecordTable(companyIndex, new CompanyHashTable(companyHashes), nowMs)
  const pool = new RecordPool(
    { rates, companies, nowMs },
    stagingDir,
    (outcomes, spill) => records.acceptOutcomes(outcomes, spill),
    threads,
    // Asked for by number, the workers do every record (as the tests of that path rely on).
    cache && options.workers === undefined ? IN_PROCESS_FIRST_RECORDS : 0,
  )
  const writer = new SnapshotFileWriter(stagingDir, previous)
  // Worker threads and open files are released whether the build succeeds or throws.
  const closers: (() => unknown)[] = [
    () => pool.close(),
    () => writer.close(),
    () => scanThread?.close(),
    () => prefetch?.stop(),
  ]
  // Made now, so that its exports thread starts (a second or so under tsx) while pass 1 runs.
  const exportsWriter = new ExportsWriter(stagingDir, writer, previous, options.parquetRowGroupRows)
  closers.push(() => exportsWriter.close())
  let published = false
  try {
    // Pass 1: check every record, reusing what the previous build worked out where nothing changed.
    let bytesRead = 0
    const fresh: number[] = []
    for await (const batch of scanThread?.batches() ?? scanRecords(options.dataDir, files, cache)) {
      issues.push(...batch.issues)
      const file = files[batch.file]!
      const first = records.takeCached(batch, file, cache, fresh)
      const raw = Buffer.from(batch.raw.buffer, batch.raw.byteOffset, batch.raw.byteLength)
      for (const n of fresh) {
        records.freshKeys.set(first + n, keyAt(batch, n))
        const text = raw.toString('utf8', n === 0 ? 0 : batch.ends[n - 1], batch.ends[n])
        await pool.add(first + n, sourceAt(file, batch.spots[n]!), text)
      }
      for (const size of batch.sizes) bytesRead += size
      progress.step('checking jobs', bytesRead, totalBytes, 'bytes')
    }
    // What pass 2 starts from, read on libuv's threads while this one finishes pass 1 and orders the jobs:
    // read here, ~460 MB at 1M jobs (from the page cache, prefetched) were ~1.2 s of this thread alone.
    const previousIndexBytes = cache && previous ? readPrevious(previous.dir, snapshotPaths.jobIndexBinary) : undefined
    const previousPostingsBytes =
      cache && previous ? readPrevious(previous.dir, snapshotPaths.searchPostings) : undefined
    await pool.drain()
    progress.step('checking jobs', totalBytes, totalBytes, 'bytes')
    records.finishChecks(issues)
    issues.push(...missingRecordsIssue('jobs', files, records.size, issues))
    if (issues.length > 0 || !rates) throw new DatasetInvalidError(issues)

    const live = records.liveInDateOrder()
    const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`
    progress.log(
      `checked ${records.size} job records (${live.length} live, ${records.reused} reused from the previous build), ${companies.length} companies in ${seconds(started)}`,
    )
    const writeStarted = performance.now()

    // Pass 2: the live jobs in date order.
    await mkdir(path.join(stagingDir, 'index'), { recursive: true })
    const jobBase = await jobDeltaBase(
      previous,
      live.length,
      records.countLiveReused(live),
      options.jobDeltaMaxPercent ?? DEFAULTS.JOBSNAP_JOB_DELTA_MAX_PERCENT,
    )
    if (jobBase !== undefined) {
      await mkdir(path.join(stagingDir, JOB_FILES_DIR), { recursive: true })
      await symlink(jobBaseTarget(jobBase), path.join(stagingDir, JOB_BASE_LINK))
      writer.useJobBase()
    }
    const previousBodies = cache && previous ? openPreviousBodies(previous.dir) : undefined
    if (previousBodies)
      closers.push(
        () => closePreviousBodies(previousBodies.v2),
        () => closePreviousBodies(previousBodies.v1),
      )
    // The big private files are written and hashed on a thread of their own (write-thread.ts).
    const writeThread = new WriteThread()
    closers.push(() => writeThread.close())
    // The packed bodies are a delta over the last whole ones when the job files are (the same bound on how much
    // changed since then) and large enough for it to matter.
    const bodiesBase = async (which: 'v2Bodies' | 'v1Bodies') =>
      jobBase !== undefined && previousBodies
        ? await layerBodies(
            previous!,
            stagingDir,
            snapshotPaths[which],
            previousBodies[which === 'v2Bodies' ? 'v2' : 'v1'],
            options.bodiesDeltaMinBytes ?? BODIES_DELTA_MIN_BYTES,
          )
        : undefined
    const v2Base = await bodiesBase('v2Bodies')
    const v1Base = await bodiesBase('v1Bodies')
    const packedV2 = new PackedBodiesWriter(stagingDir, snapshotPaths.v2Bodies, writeThread, v2Base?.size)
    const packedV1 = new PackedBodiesWriter(stagingDir, snapshotPaths.v1Bodies, writeThread, v1Base?.size)
    const jobIndexFile = options.legacyJobIndex
      ? new BufferedFileWriter(path.join(stagingDir, snapshotPaths.jobIndex), writeThread)
      : undefined
    // Written, not hashed: nothing records the cache's hash (~1 GB of SHA-256 at 1M jobs for nothing).
    const cacheFile = new BufferedFileWriter(path.join(stagingDir, snapshotPaths.buildCache), writeThread, false)
    closers.push(
      () => packedV2.close(),
      () => packedV1.close(),
      () => jobIndexFile?.close(),
      () => cacheFile.close(),
    )
    const v1Pages = new V1PageWriter(
      writer,
      v1UsageNotice(options.siteUrl),
      live.length,
      unchangedV1Pages(previous, options.siteUrl, live, records),
    )
    const jobIndexBin = new JobIndexFileWriter(live.length)
    // The previous snapshot's job files by position: its list is in date order (each build adds them as the
    // jobs go by), so a reused job's file is the one at its previous position when that file's hash is the job's.
    const previousJobFiles =
      previousBodies && previous!.jobFiles.size === previousBodies.v2.packed.size ? previous!.jobFiles : undefined
    const jobFiles = new JobFileListBuilder(previous?.jobFiles, live.length)
    // Reused jobs' binary index records come forward from the previous snapshot's (no JSON to parse).
    const previousIndex =
      previousBodies && previousJobIndex(previous!.dir, await previousIndexBytes, previousBodies.v2.packed.size)
    const textIndex = new TermPostingsBuilder()
    // Jobs republished unchanged keep their terms: their lists come forward from the previous snapshot's.
    const postingsCarried =
      cache && previous
        ? carryForwardPostings(textIndex, previous.dir, await previousPostingsBytes, live, records)
        : false
    const liveByCompany = new Uint32Array(companies.length)
    let newest: { v2: V2Job; v1: V1Job; company: number } | undefined

    const bySalary = salaryOrder(live.map((ordinal) => records.salaryHigh[ordinal]))
    jobIndexFile?.write(
      `{"salary_order":${JSON.stringify(Array.from(bySalary))},"jobs":${live.length === 0 ? '[]' : '[\n'}`,
    )
    cacheFile.write(cacheHeader(contextHash!))
    const fields = new CacheLineFields()
    // The index entry of the reused job at hand (in `fields`), parsed only when asked for: one function made
    // once, not a closure per job (each made through the keepNames helper when run under tsx: a second at 1M jobs).
    const parsedEntry = (): IndexedJob =>
      JSON.parse(cache!.text.toString('utf8', fields.hashEnd + 1, fields.indexedEnd)) as IndexedJob
    for (let position = 0; position < live.length; ) {
      if ((position & 1023) === 0) progress.step('writing jobs', position, live.length, 'jobs')
      const run = reusedRunAt(live, position, records)
      if (run > 0) {
        // A run of reused jobs that were consecutive in the previous snapshot too: their bodies are one range
        // of its packed files (kept where they are in a base, else copied); each job's v1 body is a view of it.
        const bodies = previousBodies!
        const first = records.previousPosition[live[position]!]!
        // The v2 bodies are copied by the write thread: nothing here needs them (the exports' thread reads its own),
        // but for the rare job whose file must be written and the newest job, read then.
        packedV2.keepRange(bodies.v2, first, first + run, false)
        const v1Run = packedV1.keepRange(bodies.v1, first, first + run, true)
        const text = cache!.text
        // Their cache lines follow one another in the previous cache (written in position order); at
        // unchanged positions they are copied as one range, else each with its new position.
        let copyFrom = first === position ? records.cachedLine[live[position]!]! : -1
        let v1At = 0
        for (let i = 0; i < run; i++) {
          const at = position + i
          const ordinal = live[at]!
          cache!.fieldsAt(records.cachedLine[ordinal]!, fields)
          const v1Length = bodies.v1.packed.lengthOf(first + i)
          const v1 = v1Run.subarray(v1At, v1At + v1Length)
          v1At += v1Length + 1
          // The previous snapshot's file at this job's previous position holds this job's bytes when its hash is
          // the one the cache recorded for them (a v2 body names its slug, so it is this job's file): its path and
          // hash are the previous manifest's own strings, nothing new to allocate, and nothing looked up by path in
          // a map of a million (twice a job, here and to link it) or compared as a string (~1.2 s at 1M jobs).
          // The previous snapshot's file at this job's previous position holds this job's bytes when its hash is
          // the one the cache recorded for them (a v2 body names its slug, so it is this job's file): its line of
          // the previous list is this one's, and most such files stay where they are (the base layer), not
          // even a path to make for them.
          const sameFile = previousJobFiles?.hashIs(first + i, text, fields.summaryEnd + 1, fields.hashEnd) === true
          const hash = text.toString('latin1', fields.summaryEnd + 1, fields.hashEnd)
          if (at === 0) newest = newestOf(bodies.v2.packed.body(first + i), v1, records.company[ordinal]!)
          if (sameFile) jobFiles.keep(first + i)
          if (!sameFile || !writer.keepsJobInBase(first + i)) {
            const jobFile = snapshotPaths.v2Job(records.slugs[ordinal]!)
            const previousHash = sameFile ? hash : jobFiles.add(records.slugs[ordinal]!, hash, first + i)
            if (!writer.linkIfUnchanged(jobFile, hash, previousHash))
              await writer.writePublic(jobFile, bodies.v2.packed.body(first + i), {
                hash,
                linkOnly: true,
                borrowed: true,
              })
            else if (writer.saturated) await writer.room()
          } else if (writer.saturated) await writer.room()
          // Awaited only when there is something to wait for: `await undefined` still suspends and resumes this
          // function (and allocates), twice per job.
          const exported = exportsWriter.addPrevious(first + i, hash)
          if (exported) await exported
          const paged = v1Pages.add(v1)
          if (paged) await paged
          if (jobIndexFile) {
            if (at > 0) jobIndexFile.write(',\n')
            jobIndexFile.write(text.subarray(fields.hashEnd + 1, fields.indexedEnd))
          }
          if (previousIndex) jobIndexBin.addPrevious(previousIndex, first + i, parsedEntry)
          else jobIndexBin.add(parsedEntry())
          if (!postingsCarried)
            textIndex.add(
              at,
              fields.end === fields.indexedEnd + 1
                ? []
                : text.toString('utf8', fields.indexedEnd + 1, fields.end).split(' '),
            )
          liveByCompany[records.company[ordinal]!]!++
          if (copyFrom >= 0) {
            const next = i + 1 < run ? records.cachedLine[live[at + 1]!]! : -1
            if (next === fields.end + 1) continue
            cacheFile.write(text.subarray(copyFrom, fields.end + 1))
            // Not the next line (not expected of a cache this code wrote): the rest of the run line by line.
            copyFrom = -1
            continue
          }
          cacheFile.write(text.subarray(fields.line, fields.companyEnd + 1))
          cacheFile.write(`${at}\t`)
          cacheFile.write(text.subarray(fields.positionEnd + 1, fields.end + 1))
        }
        position += run
        continue
      }
      const ordinal = live[position]!
      const { v2, v1, entry } = records.freshOutputsOf(ordinal, pool)
      // The newest job (and its employer, below) are the OpenAPI document's examples.
      if (position === 0) newest = newestOf(v2, v1, records.company[ordinal]!)
      const jobFile = snapshotPaths.v2Job(records.slugs[ordinal]!)
      const previousHash = jobFiles.add(records.slugs[ordinal]!, entry.hash)
      if (!writer.linkIfUnchanged(jobFile, entry.hash, previousHash))
        await writer.writePublic(jobFile, v2, { hash: entry.hash, linkOnly: true, borrowed: true })
      else if (writer.saturated) await writer.room()
      packedV2.add(v2)
      packedV1.add(v1)
      const exported = exportsWriter.addJob(v2, entry.hash)
      if (exported) await exported
      const paged = v1Pages.add(v1)
      if (paged) await paged
      if (jobIndexFile) {
        if (position > 0) jobIndexFile.write(',\n')
        jobIndexFile.write(entry.indexedJson)
      }
      jobIndexBin.add(JSON.parse(entry.indexedJson) as IndexedJob)
      textIndex.add(position, entry.terms)
      const company = records.company[ordinal]!
      liveByCompany[company]!++
      cacheFile.write(`${records.freshKeys.get(ordinal)!}\t${companyHashes[company]!}\t${position}\t`)
      cacheFile.write(entry.cacheTail)
      cacheFile.write('\n')
      position++
    }
    progress.step('writing jobs', live.length, live.length, 'jobs')
    progress.log(`wrote ${live.length} jobs in ${seconds(writeStarted)}`)
    const finishStarted = performance.now()
    await v1Pages.finish()
    jobIndexFile?.write(live.length === 0 ? '}\n' : '\n]}\n')
    // Records not published (closed, expired) are cached too: next time they skip their schema pass.
    // A reused record published before (and expired since) had a meta: not kept, as a fresh build would not have one.
    for (let ordinal = 0; ordinal < records.size; ordinal++) {
      if (records.isLive[ordinal] === 1) continue
      const line = records.cachedLine[ordinal]
      if (line === undefined) {
        const company = companyHashes[records.company[ordinal]!]!
        cacheFile.write(cacheLine(records.freshKeys.get(ordinal)!, company, -1, `${records.freshSummaryOf(ordinal)}\t`))
        continue
      }
      const { head, summary } = cache!.headAndSummaryAt(line)
      cacheFile.write(head)
      cacheFile.write('-1\t')
      cacheFile.write(summary)
      cacheFile.write('\t\n')
    }
    // Every record's cache line is written: what was kept for it (a million summaries and keys at 1M jobs) goes.
    records.releaseOutputs()
    const examples: OpenApiExamples | undefined = newest && {
      v2Job: newest.v2,
      v1Job: newest.v1,
      company: toV2CompanyProfile(
        publishedCompany(companies[newest.company]!, liveByCompany[newest.company]!),
        liveByCompany[newest.company]!,
      ),
      v1Usage: v1UsageNotice(options.siteUrl),
      liveJobs: live.length,
      liveCompanies: liveByCompany.reduce((count, jobs) => count + (jobs > 0 ? 1 : 0), 0),
    }
    await writer.writePublic(snapshotPaths.openapi, buildOpenApiYaml(options.siteUrl, examples), { precompress: true })

    const indexHashes: Record<string, string> = {}
    const writeIndexFile = async (relativePath: string, body: string | Buffer | readonly Buffer[]) => {
      indexHashes[relativePath] = indexFileHash(body)
      await writer.writePrivate(relativePath, body)
    }
    if (jobIndexFile) indexHashes[snapshotPaths.jobIndex] = await jobIndexFile.finish()
    // Its parts one after the other: joined, they would be a second copy of ~200 MB at 1M jobs.
    await writeIndexFile(snapshotPaths.jobIndexBinary, jobIndexBin.finish(bySalary))
    await cacheFile.finish()
    progress.log('writing search index')
    const { terms, postings } = textIndex.serialize()
    await writeIndexFile(snapshotPaths.searchTerms, JSON.stringify(terms))
    await writeIndexFile(snapshotPaths.searchPostings, postings)
    const companyIndexFile: IndexedCompany[] = companies.map((company, index) =>
      publishedCompany(company, liveByCompany[index]!),
    )
    await writeIndexFile(snapshotPaths.companies, jsonArrayByLine(companyIndexFile))
    await writeIndexFile(snapshotPaths.companyColumns, serializeCompanyColumns(companyIndexFile))
    for (const [packed, paths] of [
      [packedV2, snapshotPaths.v2Bodies],
      [packedV1, snapshotPaths.v1Bodies],
    ] as const) {
      const { lengths, bodiesHash, starts } = await packed.finish()
      indexHashes[paths.bodies] = bodiesHash
      await writeIndexFile(paths.lengths, lengths)
      if (starts) await writeIndexFile(paths.starts, starts)
    }
    for (const [base, paths] of [
      [v2Base, snapshotPaths.v2Bodies],
      [v1Base, snapshotPaths.v1Bodies],
    ] as const)
      if (base) indexHashes[paths.base] = base.hash
    await writer.flush()
    await rewriteFailedLinks(
      writer,
      stagingDir,
      live.map((ordinal) => records.slugs[ordinal]!),
      v1UsageNotice(options.siteUrl),
    )
    progress.log(`wrote the indexes and the last files in ${seconds(finishStarted)}`)
    // After the other files are on disk: what is waited for here is the exports' own work, not the queue before it.
    const exportsStarted = performance.now()
    const exports = await exportsWriter.finish(
      companyIndexFile.map((company) => ({ company, liveJobs: company.live_jobs })),
    )
    progress.log(`finished the bulk exports in ${seconds(exportsStarted)}`)
    await pool.close()
    await Promise.all(pool.spillFiles.map((file) => rm(file, { force: true })))

    const closed = records.countWhere((ordinal) => records.status[ordinal] === 'closed')
    const jobLines = jobFiles.finish()
    const snapshotId = await unusedSnapshotId(options.distDir, snapshotIdFor(now, writer.hashes, jobLines))
    const manifest: SnapshotManifest = {
      format: SNAPSHOT_FORMAT,
      snapshot_id: snapshotId,
      built_at: now.toISOString(),
      site_url: options.siteUrl,
      rates_as_of: rates.as_of,
      counts: {
        records_jobs: records.size,
        live_jobs: live.length,
        closed_jobs: closed,
        expired_jobs: records.size - live.length - closed,
        companies: companies.length,
      },
      v1_limits: [...PRECOMPUTED_V1_LIMITS],
      files: Object.fromEntries(writer.hashes),
      job_files: { count: jobFiles.size, sha256: indexFileHash(jobLines) },
      index_hashes: indexHashes,
      exports,
    }
    const companiesChanged = previous?.indexHashes[snapshotPaths.companies] !== indexHashes[snapshotPaths.companies]
    const jobFileChanges = jobFiles.changes()
    const changes = diffSnapshots(previous?.hashes, writer.hashes, companiesChanged, jobFileChanges)
    if (jobBase !== undefined) {
      await writer.writeWhiteouts(goneFromBase(previous!, changes.removed, jobFiles))
      await writer.flush()
      await writer.writePrivate(JOB_DELTA_LIST, linesOf(writer.ownJobFiles))
      await writer.writePrivate(
        JOB_BASE_HASHES,
        linesOf(Array.from(writer.jobBaseHashes, ([slug, hash]) => `${slug}\t${hash}`)),
      )
    }
    const tags = changedTags(changes, {
      first: previous === undefined,
      companies:
        previous && companiesChanged
          ? changedCompanies((await previousCompanies(previous.dir)) ?? [], companyIndexFile)
          : [],
      // index/jobs.bin holds everything a list filters and sorts on (index/jobs.json, which older builds
      // also wrote, held no more), so its hash changes whenever a list's answer may.
      jobIndexChanged:
        previous !== undefined &&
        previous.indexHashes[snapshotPaths.jobIndexBinary] !== indexHashes[snapshotPaths.jobIndexBinary],
    })
    await writer.writePrivate(CHANGED_PATHS_FILE, linesOf(changes.purge))
    await writer.writePrivate(CHANGED_TAGS_FILE, linesOf(tags))
    await writer.writePrivate(snapshotPaths.changes, JSON.stringify(jobChanges(previous?.id, jobFileChanges)))
    // The index files as they now are on disk, with the hashes computed from the bytes written: a server
    // trusts a file whose identity is unchanged instead of hashing it again (core/verified-files.ts).
    // A layered pair's base is vouched for only as the previous snapshot's record did: this build never read it.
    const baseFiles = new Set([snapshotPaths.v2Bodies.base, snapshotPaths.v1Bodies.base])
    const verified = await identitiesOf(
      stagingDir,
      Object.fromEntries(Object.entries(indexHashes).filter(([file]) => !baseFiles.has(file))),
    )
    for (const base of [v2Base, v1Base]) if (base?.vouched) verified[base.paths.base] = base.vouched
    await recordVerifiedFiles(stagingDir, verified)
    await writer.writePrivate(snapshotPaths.jobFiles, jobLines)
    // The manifest goes last: a snapshot folder without one is incomplete by definition.
    await writer.writePrivate(snapshotPaths.manifest, serializeManifest(manifest))
    const snapshotDir = await publishSnapshot(options.distDir, stagingDir, snapshotId)
    published = true
    await pruneSnapshots(options.distDir, options.keepSnapshots ?? DEFAULTS.JOBSNAP_KEEP_SNAPSHOTS)
    progress.done()
    return {
      snapshotId,
      snapshotDir,
      manifest,
      // Made when asked for (tests, tools): a map of every job file is what the build no longer makes.
      get files() {
        return new Map([
          ...writer.hashes,
          ...Array.from(jobFiles.entries(), ([slug, hash]) => [snapshotPaths.v2Job(slug), hash] as const),
        ])
      },
      durationMs: performance.now() - started,
      changes,
      changedTags: tags,
      filesRewritten: writer.rewritten,
      filesReused: writer.reused,
      jobBase,
      jobFilesInBase: writer.inBase,
      jobWhiteouts: writer.whiteouts,
      recordsReused: records.reused,
      exportMembersReused: exportsWriter.stats.membersReused,
      exportMembers: exportsWriter.stats.members,
      parquetChunksReused: exportsWriter.stats.parquetChunksReused,
      parquetChunks: exportsWriter.stats.parquetChunks,
      exportsMs: exportsWriter.stats.busyMs,
    }
  } finally {
    for (const close of closers) await close()
    // A refused or failed build leaves nothing behind (a crashed one is swept by the next build).
    if (!published) await rm(stagingDir, { recursive: true, force: true })
  }
}

/**
 * Files the previous snapshot should have held but did not (deleted by
 * hand: their links failed), job files and v1 pages, written from this
 * snapshot's packed bodies.
 */
async function rewriteFailedLinks(
  writer: SnapshotFileWriter,
  stagingDir: string,
  slugsInDateOrder: string[],
  usage: string,
): Promise<void> {
  if (writer.failedLinks.length === 0) return
  const failed = new Set(writer.failedLinks.splice(0))
  const v2 = openPackedBodies(stagingDir, snapshotPaths.v2Bodies)
  const v1 = openPackedBodies(stagingDir, snapshotPaths.v1Bodies)
  try {
    for (const [position, slug] of slugsInDateOrder.entries()) {
      const file = snapshotPaths.v2Job(slug)
      if (failed.has(file)) await writer.writePublic(file, Buffer.from(v2.body(position)))
    }
    const total = slugsInDateOrder.length
    for (const limit of PRECOMPUTED_V1_LIMITS) {
      for (let page = 1; (page - 1) * limit < Math.max(total, 1); page++) {
        const file = snapshotPaths.v1Page(limit, page)
        if (!failed.has(file)) continue
        const { head, tail } = v1PageFrame(usage, page, limit, total)
        const bodies: Buffer[] = []
        for (let position = (page - 1) * limit; position < Math.min(page * limit, total); position++)
          bodies.push(Buffer.from(v1.body(position)))
        await writer.writePublic(file, Buffer.concat([Buffer.from(head), ...joinedByCommas(bodies), Buffer.from(tail)]))
      }
    }
    await writer.flush()
  } finally {
    v2.close()
    v1.close()
  }
}

const joinedByCommas = (parts: Buffer[]): Buffer[] =>
  parts.flatMap((part, index) => (index > 0 ? [COMMA, part] : [part]))
const COMMA = Buffer.from(',')

/**
 * The previous hash of each v1 page that is the previous snapshot's, byte for byte, known
 * without making it: same frame (live job count, usage notice), and every job on it the
 * previous snapshot's job at the same position, reused unchanged (its v1 body is read back
 * from there). After a 1% change, most pages of 25 are; making, hashing and handing them to
 * a worker only to link them cost a large share of an incremental build's own thread.
 */
function unchangedV1Pages(
  previous: PreviousSnapshot | undefined,
  siteUrl: string,
  live: readonly number[],
  records: RecordTable,
): (limit: number, page: number) => string | undefined {
  if (!previous || previous.liveJobs !== live.length || previous.siteUrl !== siteUrl) return () => undefined
  // moved[i]: how many of the first i positions hold anything but the previous job at that position.
  const moved = new Uint32Array(live.length + 1)
  for (const [position, ordinal] of live.entries()) {
    const same = records.cachedLine[ordinal] !== undefined && records.previousPosition[ordinal] === position
    moved[position + 1] = moved[position]! + (same ? 0 : 1)
  }
  return (limit, page) => {
    const start = Math.min((page - 1) * limit, live.length)
    const end = Math.min(page * limit, live.length)
    return moved[end] === moved[start] ? previous.hashes.get(snapshotPaths.v1Page(limit, page)) : undefined
  }
}

/** A company as index/companies.json keeps it for the MCP tools: published fields, plain description, live job count. */
function publishedCompany(company: DatasetCompany, liveJobs: number): IndexedCompany {
  const { description_html: _html, total_raised: _raised, description: _text, ...published } = company
  const description = plainDescription(company)
  return { ...published, ...(description ? { description } : {}), live_jobs: liveJobs }
}

/** What the write pass puts in the job index, the search lists and the next cache for a job checked afresh. */
interface FreshEntry {
  /** The v2 body's content hash. */
  hash: string
  /** Its index entry (IndexedJob) as JSON. */
  indexedJson: string
  /** Its cache line after the position: `summary-json \t meta`. */
  cacheTail: string
  terms: string[]
}

/** The newest job's bodies, parsed (they may be views of reused buffers), with its company: the OpenAPI examples. */
function newestOf(v2: Buffer, v1: Buffer, company: number): { v2: V2Job; v1: V1Job; company: number } {
  return { v2: JSON.parse(v2.toString('utf8')), v1: JSON.parse(v1.toString('utf8')), company }
}

/** Reused jobs taken as one run at most: their bodies fit the previous bodies' read-ahead many times over. */
const MAX_REUSED_RUN = 256

/**
 * How many jobs from `position` on are reused and were consecutive in the previous snapshot too
 * (positions first, first + 1, ...), up to MAX_REUSED_RUN; 0 when the job at `position` is not reused.
 */
function reusedRunAt(live: readonly number[], position: number, records: RecordTable): number {
  const ordinal = live[position]!
  if (records.cachedLine[ordinal] === undefined) return 0
  const first = records.previousPosition[ordinal]!
  let run = 1
  while (run < MAX_REUSED_RUN && position + run < live.length) {
    const next = live[position + run]!
    if (records.cachedLine[next] === undefined || records.previousPosition[next] !== first + run) break
    run++
  }
  return run
}

/**
 * Seeds `builder` with the previous snapshot's search lists for the jobs
 * this build republishes from the cache (same record, same terms), remapped
 * to their new positions; false (add every job's terms instead) when those
 * lists cannot be read.
 */
function carryForwardPostings(
  builder: TermPostingsBuilder,
  previousDir: string,
  postingsBytes: Buffer | undefined,
  live: readonly number[],
  records: RecordTable,
): boolean {
  if (!postingsBytes) return false
  let terms: SerializedTerms
  let postings: Uint32Array
  try {
    const termsPath = path.join(previousDir, snapshotPaths.searchTerms)
    terms = SerializedTerms.parse(JSON.parse(readFileSync(termsPath, 'utf8')))
    postings = uint32View(postingsBytes, path.join(previousDir, snapshotPaths.searchPostings))
  } catch {
    return false
  }
  let previousLive = 0
  for (const ordinal of live)
    if (records.cachedLine[ordinal] !== undefined)
      previousLive = Math.max(previousLive, records.previousPosition[ordinal]! + 1)
  const newPosition = new Int32Array(previousLive).fill(-1)
  for (const [position, ordinal] of live.entries())
    if (records.cachedLine[ordinal] !== undefined) newPosition[records.previousPosition[ordinal]!] = position
  builder.carryForward(terms, postings, newPosition)
  return true
}

/**
 * The slugs a delta's whiteouts name: jobs its base layer may hold and it does not publish. The base's
 * jobs are the previous snapshot's, but for those the previous delta added (a whiteout for one of those
 * is harmless: the job is gone either way) and those it had whiteouts for: so the previous snapshot's
 * removed job files, and its whiteouts still not published (a slug the previous snapshot did not list
 * is published again only as a job added to the list, not kept from it).
 */
function goneFromBase(
  previous: PreviousSnapshot,
  removed: readonly string[],
  jobFiles: JobFileListBuilder,
): Set<string> {
  const gone = new Set<string>()
  for (const file of removed) {
    const slug = jobFileSlug(file)
    if (slug !== undefined) gone.add(slug)
  }
  for (const slug of previous.jobDelta?.gone ?? []) if (!jobFiles.addedSlug(slug)) gone.add(slug)
  return gone
}

/**
 * A file of the previous snapshot, read on a libuv thread; undefined when it cannot be read. In one read
 * call, not readFile's 512 KB chunks: each chunk waits for this thread to ask for the next, and this thread
 * is busy meanwhile.
 */
async function readPrevious(dir: string, file: string): Promise<Buffer | undefined> {
  try {
    const handle = await open(path.join(dir, file), 'r')
    try {
      const { size } = await handle.stat()
      const bytes = Buffer.allocUnsafeSlow(size)
      for (let at = 0; at < size; ) {
        const { bytesRead } = await handle.read(bytes, at, size - at, at)
        if (bytesRead === 0) return undefined
        at += bytesRead
      }
      return bytes
    } finally {
      await handle.close()
    }
  } catch {
    return undefined
  }
}

/** The previous snapshot's index/jobs.bin, for addPrevious; undefined when it cannot be read (its jobs are parsed then). */
function previousJobIndex(dir: string, bytes: Buffer | undefined, jobs: number): PreviousJobIndex | undefined {
  if (!bytes) return undefined
  try {
    const index = new PreviousJobIndex(readJobIndexFile(bytes, path.join(dir, snapshotPaths.jobIndexBinary)))
    return index.size === jobs ? index : undefined
  } catch {
    return undefined
  }
}

/**
 * The previous snapshot's packed bodies, where a reused record's bodies are read back from, with their
 * files open once more for the write thread to copy from.
 */
function openPreviousBodies(dir: string): { v2: PreviousBodies; v1: PreviousBodies } {
  const open = (paths: PackedBodiesPaths): PreviousBodies => {
    // Opened first: it checks that every body lies inside its files, which the copies rely on.
    const packed = openPackedBodies(dir, paths)
    const fd = openSync(path.join(dir, paths.bodies), 'r')
    if (!packed.layered) return { packed, fd }
    const baseFd = openSync(path.join(dir, paths.base), 'r')
    return { packed, fd, base: { fd: baseFd, size: fstatSync(baseFd).size } }
  }
  return { v2: open(snapshotPaths.v2Bodies), v1: open(snapshotPaths.v1Bodies) }
}

function closePreviousBodies(previous: PreviousBodies): void {
  previous.packed.close()
  closeSync(previous.fd)
  if (previous.base) closeSync(previous.base.fd)
}

/** Whether a snapshot's packed bodies files are all there, a layered pair's base included (followed through its link). */
function previousBodiesThere(dir: string): boolean {
  return [snapshotPaths.v2Bodies, snapshotPaths.v1Bodies].every(
    (paths) =>
      existsSync(path.join(dir, paths.bodies)) &&
      (!existsSync(path.join(dir, paths.starts)) || existsSync(path.join(dir, paths.base))),
  )
}

/**
 * Whether a rebuild over the snapshot in `dir` is expected to copy its v2 bodies file: when that file is a
 * delta (its bodies go on to the next delta), or whole but too small to be a base. A guess made before pass 1
 * (a rebuild past the delta bound writes whole bodies after all, and then reads them as it goes).
 */
function v2BodiesCopied(dir: string, minBytes: number): boolean {
  const paths = snapshotPaths.v2Bodies
  if (existsSync(path.join(dir, paths.starts))) return true
  try {
    return statSync(path.join(dir, paths.bodies)).size < minBytes
  } catch {
    return false
  }
}

/**
 * Packed bodies smaller than this are written whole by every build: a delta saves little there, and a
 * server holds small bodies in memory, where one file is simplest (about 170 MB of v2 bodies at 100k jobs).
 */
const BODIES_DELTA_MIN_BYTES = 256 << 20

/**
 * Makes this build's packed bodies (`paths`) a delta over the last whole ones: the previous snapshot's
 * base when its were layered, else its whole file, linked as `paths.base`. Undefined (write them whole)
 * when the previous ones are under `minBytes`, or their base or its hash cannot be found. Returns the base's
 * size and hash, and what the previous snapshot's verification record says of it.
 */
async function layerBodies(
  previous: PreviousSnapshot,
  stagingDir: string,
  paths: PackedBodiesPaths,
  bodies: PreviousBodies,
  minBytes: number,
): Promise<{ size: number; hash: string; paths: PackedBodiesPaths; vouched?: VerifiedFiles[string] } | undefined> {
  const size = bodies.base?.size ?? fstatSync(bodies.fd).size
  if (size < minBytes) return undefined
  const baseId = bodies.base ? bodiesBaseId(previous.dir, paths) : previous.id
  const asListed = bodies.base ? paths.base : paths.bodies
  const hash = previous.indexHashes[asListed]
  if (baseId === undefined || hash === undefined) return undefined
  await symlink(bodiesBaseTarget(baseId, paths), path.join(stagingDir, paths.base))
  const stats = await stat(path.join(stagingDir, paths.base), { bigint: true }).catch(() => undefined)
  if (stats === undefined) return undefined
  const vouched = isVerified(await readVerifiedFiles(previous.dir), asListed, hash, stats)
  return { size, hash, paths, ...(vouched ? { vouched: { hash, identity: fileIdentity(stats) } } : {}) }
}

/**
 * Writes the precomputed v1 pages as the jobs come by in date order: each
 * body is copied into its page's buffer at once (the caller's bytes may be a
 * reused buffer), and a page is written once it is full.
 */
class V1PageWriter {
  private readonly pending: PendingPage[] = PRECOMPUTED_V1_LIMITS.map((limit) => ({
    limit,
    page: 1,
    count: 0,
    length: 0,
    bytes: Buffer.allocUnsafe(1 << 16),
    unchanged: undefined,
  }))

  constructor(
    private readonly writer: SnapshotFileWriter,
    private readonly usage: string,
    private readonly total: number,
    /** The previous hash of a page known to be unchanged (see unchangedV1Pages). */
    private readonly unchangedHash: (limit: number, page: number) => string | undefined,
  ) {
    for (const page of this.pending) page.unchanged = unchangedHash(page.limit, 1)
  }

  /**
   * Adds the next job's v1 body to each page size's current page. A promise only when a page
   * was completed (then wait for it before the next add): most jobs complete none.
   */
  add(body: Buffer): Promise<void> | undefined {
    return this.addFrom(0, body)
  }

  private addFrom(first: number, body: Buffer): Promise<void> | undefined {
    for (let i = first; i < this.pending.length; i++) {
      const page = this.pending[i]!
      if (page.unchanged === undefined) {
        const needed = page.length + body.length + 1
        if (needed > page.bytes.length) {
          const grown = Buffer.allocUnsafe(Math.max(needed, page.bytes.length * 2))
          page.bytes.copy(grown, 0, 0, page.length)
          page.bytes = grown
        }
        if (page.count > 0) page.bytes[page.length++] = COMMA_BYTE
        page.bytes.set(body, page.length)
        page.length += body.length
      }
      // The page is written before the next size's page takes the body, as one at a time always did.
      if (++page.count === page.limit) return this.writeThenAdd(page, i + 1, body)
    }
    return undefined
  }

  private async writeThenAdd(page: PendingPage, next: number, body: Buffer): Promise<void> {
    await this.write(page)
    await this.addFrom(next, body)
  }

  /** The last, partial pages (and page 1 of an empty snapshot). */
  async finish(): Promise<void> {
    for (const page of this.pending) if (page.count > 0 || page.page === 1) await this.write(page)
  }

  private async write(page: PendingPage): Promise<void> {
    const file = snapshotPaths.v1Page(page.limit, page.page)
    if (page.unchanged !== undefined) await this.writer.linkPublic(file, page.unchanged)
    else {
      // The page's bytes are handed over as they are (framed on the worker, hashed there): at 1M jobs a build
      // where 1% of jobs changed rewrites ~1.5 GB of pages, whose joining and hashing here held up every job.
      const { head, tail } = v1PageFrame(this.usage, page.page, page.limit, this.total)
      const bytes = page.bytes.subarray(0, page.length)
      page.bytes = Buffer.allocUnsafe(page.bytes.length)
      await this.writer.writePublicHashedOnWorker(file, [Buffer.from(head), bytes, Buffer.from(tail)])
    }
    page.page++
    page.count = 0
    page.length = 0
    page.unchanged = this.unchangedHash(page.limit, page.page)
  }
}

interface PendingPage {
  limit: number
  page: number
  count: number
  length: number
  bytes: Buffer
  /** Set while the page is known to be the previous snapshot's: its previous hash, and no bytes are gathered. */
  unchanged: string | undefined
}

const COMMA_BYTE = 0x2c

/**
 * What pass 1 keeps per record (by ordinal, the record's place in the
 * dataset): plain arrays of small values, no per-record objects, so a
 * million records stay well inside the default heap.
 */
/** liveInDateOrder's sort keys: a date's rank times this plus a place in the list, exact in a double up to 2^26 jobs. */
const DATE_KEY_PLACES = 2 ** 26

class RecordTable {
  size = 0
  reused = 0
  /** Cache keys of the records checked afresh; a reused record's key is in its previous cache line. */
  readonly freshKeys = new Map<number, string>()
  readonly ids: (string | undefined)[] = []
  readonly slugs: (string | undefined)[] = []
  readonly status: (RecordSummary['status'] | undefined)[] = []
  readonly postedAt: number[] = []
  readonly salaryHigh: (number | undefined)[] = []
  /** Index of the record's company in the dataset's companies. */
  readonly company: number[] = []
  /** 1 for a job this snapshot publishes. */
  readonly isLive: number[] = []
  /** Reused records: their line in the previous build's cache and their position in its packed bodies. */
  readonly cachedLine: (number | undefined)[] = []
  readonly previousPosition: number[] = []
  /** Records done by a worker: the summary, serialized, and where their outputs were spilled. */
  private readonly freshSummary: (string | undefined)[] = []
  readonly spillWorker: number[] = []
  readonly spilled: (Spilled | undefined)[] = []
  /**
   * Where each record came from, kept compactly for the issues of the checks
   * across records: a million small objects were a large share of what the
   * collector traced, again and again, in a 1M build.
   */
  private readonly sourceFiles: string[] = []
  private readonly sourceFile: number[] = []
  /** The NDJSON line (1-based, so positive), the JSON array index as -(index + 1), or 0 for a file of one record. */
  private readonly sourceSpot: number[] = []
  private readonly issuesByOrdinal = new Map<number, DatasetIssue[]>()
  /** takeCached's reader of one cache line, reused for every record. */
  private readonly cached = new CachedRecord()

  constructor(
    private readonly companyIndex: ReadonlyMap<string, number>,
    /** The same companies by their hash: how a cached record finds its own (takeCached). */
    private readonly companyByHash: CompanyHashTable,
    private readonly nowMs: number,
  ) {}

  /** A record of `file` at `spot` (a ScannedBatch spot: its line, its array index, or neither). */
  add(file: string, spot: number): number {
    if (this.sourceFiles.at(-1) !== file) this.sourceFiles.push(file)
    this.sourceFile.push(this.sourceFiles.length - 1)
    this.sourceSpot.push(spot)
    return this.size++
  }

  private sourceOf(ordinal: number): RecordSource {
    return sourceAt(this.sourceFiles[this.sourceFile[ordinal]!]!, this.sourceSpot[ordinal]!)
  }

  /**
   * Adds the records of a scanned batch, taking from the previous build's
   * cache each one found there whose company is unchanged (and that was
   * published, unless it would not be now). Sets `fresh` to the places in
   * the batch of the others, to be checked afresh; returns the first one's
   * ordinal. (A small function of its own: the hot loop of an incremental
   * build, a million times at 1M jobs.)
   */
  takeCached(batch: ScannedBatch, file: string, cache: BuildCacheReader | undefined, fresh: number[]): number {
    fresh.length = 0
    const first = this.size
    const cached = this.cached
    for (let n = 0; n < batch.ends.length; n++) {
      const ordinal = this.add(file, batch.spots[n]!)
      // A line found in a cache the build does not use (the previous manifest was unreadable) counts for nothing.
      const line = cache ? batch.lines[n]! : -1
      if (line < 0) {
        fresh.push(n)
        continue
      }
      cache!.readAt(line, cached)
      const company = this.companyByHash.find(cache!.text, cached.companyStart, cached.companyEnd)
      const reusable = company >= 0 && (cached.position >= 0 || !isLiveAt(cached.summary, this.nowMs))
      if (reusable) this.acceptCached(ordinal, cached.summary, company, cached.line, cached.position)
      else fresh.push(n)
    }
    return first
  }

  private acceptCached(ordinal: number, summary: RecordSummary, company: number, line: number, position: number): void {
    this.accept(ordinal, summary, isLiveAt(summary, this.nowMs), company)
    this.cachedLine[ordinal] = line
    this.previousPosition[ordinal] = position
    this.reused++
  }

  acceptOutcomes(outcomes: RecordOutcome[], spill: number): void {
    for (const { ordinal, summary, issues, spilled } of outcomes) {
      if (issues.length > 0) this.issuesByOrdinal.set(ordinal, issues)
      if (!summary) continue
      // A worker spills the outputs of exactly the valid jobs this snapshot publishes.
      this.accept(ordinal, summary, spilled !== undefined)
      this.freshSummary[ordinal] = JSON.stringify(summary)
      if (spilled) {
        this.spillWorker[ordinal] = spill
        this.spilled[ordinal] = spilled
      }
    }
  }

  /**
   * The rules across records, in dataset order so that "first seen" is the
   * first in the files; then every issue, in dataset order, into `issues`.
   */
  finishChecks(issues: DatasetIssue[]): void {
    if (!this.anyRepeated()) {
      for (const ordinal of [...this.issuesByOrdinal.keys()].sort((a, b) => a - b))
        issues.push(...this.issuesByOrdinal.get(ordinal)!)
      return
    }
    const ids = new UniqueKeys('job id')
    const slugs = new UniqueKeys('job slug')
    for (let ordinal = 0; ordinal < this.size; ordinal++) {
      const id = this.ids[ordinal]
      if (id === undefined) continue
      const found: DatasetIssue[] = []
      const source = this.sourceOf(ordinal)
      ids.check(id, source, id, 'id', found)
      slugs.check(this.slugs[ordinal]!, source, id, 'slug', found)
      if (found.length > 0) this.issuesByOrdinal.set(ordinal, [...found, ...(this.issuesByOrdinal.get(ordinal) ?? [])])
    }
    for (const ordinal of [...this.issuesByOrdinal.keys()].sort((a, b) => a - b))
      issues.push(...this.issuesByOrdinal.get(ordinal)!)
  }

  /**
   * Whether any id or slug comes twice, so that the checks that name each
   * repeat and where it was first seen (an object per record: seconds at 1M
   * jobs) run only when one does. Records taken from the cache stand for
   * distinct lines of the previous build's cache, that is distinct records
   * of a dataset whose ids and slugs that build (same code: the cache is
   * keyed by it) found unique; so only a line taken twice (the same record
   * bytes twice) or a record checked afresh can repeat one. Sets of all the
   * strings were 1.8 s of the build's own thread at 1M jobs; this builds
   * sets of the fresh ones only and looks the reused ones up in them.
   */
  private anyRepeated(): boolean {
    const lines = new Float64Array(this.reused)
    let taken = 0
    const freshIds = new Set<string>()
    const freshSlugs = new Set<string>()
    for (let ordinal = 0; ordinal < this.size; ordinal++) {
      const id = this.ids[ordinal]
      if (id === undefined) continue
      const line = this.cachedLine[ordinal]
      if (line !== undefined) {
        lines[taken++] = line
        continue
      }
      const seen = freshIds.size + freshSlugs.size
      freshIds.add(id)
      freshSlugs.add(this.slugs[ordinal]!)
      if (freshIds.size + freshSlugs.size !== seen + 2) return true
    }
    const sorted = lines.subarray(0, taken).sort()
    for (let at = 1; at < sorted.length; at++) if (sorted[at] === sorted[at - 1]) return true
    if (freshIds.size === 0) return false
    for (let ordinal = 0; ordinal < this.size; ordinal++) {
      if (this.cachedLine[ordinal] === undefined) continue
      if (freshIds.has(this.ids[ordinal]!) || freshSlugs.has(this.slugs[ordinal]!)) return true
    }
    return false
  }

  /** Ordinals of the live jobs, newest first, ties by id: the `sort=date` order. */
  liveInDateOrder(): number[] {
    const live: number[] = []
    for (let ordinal = 0; ordinal < this.size; ordinal++) if (this.isLive[ordinal] === 1) live.push(ordinal)
    const byIdOnTies = (a: number, b: number) =>
      this.ids[a]! < this.ids[b]! ? -1 : this.ids[a]! > this.ids[b]! ? 1 : 0
    const newestFirst = (a: number, b: number) => this.postedAt[b]! - this.postedAt[a]! || byIdOnTies(a, b)
    if (live.length < 1 << 12 || live.length > DATE_KEY_PLACES) return live.sort(newestFirst)
    // A million comparisons by callback cost a second at 1M jobs: sorted natively instead, as numbers that
    // put each job's date (its rank among the dates) above its place in `live`; equal dates then by id.
    const dates = Float64Array.from(live, (ordinal) => this.postedAt[ordinal]!)
    if (!dates.every(Number.isFinite)) return live.sort(newestFirst)
    const distinct = dates.slice().sort()
    let kept = 0
    for (let at = 0; at < distinct.length; at++)
      if (at === 0 || distinct[at] !== distinct[kept - 1]) distinct[kept++] = distinct[at]!
    const keys = new Float64Array(live.length)
    for (let at = 0; at < live.length; at++) {
      // The date's rank, newest 0, by binary search among the distinct dates (ascending).
      let low = 0
      let high = kept - 1
      while (low < high) {
        const middle = (low + high) >>> 1
        if (distinct[middle]! < dates[at]!) low = middle + 1
        else high = middle
      }
      keys[at] = (kept - 1 - low) * DATE_KEY_PLACES + at
    }
    keys.sort()
    const ordered = Array.from(keys, (key) => live[key % DATE_KEY_PLACES]!)
    for (let start = 0; start < ordered.length; ) {
      const date = this.postedAt[ordered[start]!]!
      let end = start + 1
      while (end < ordered.length && this.postedAt[ordered[end]!] === date) end++
      if (end - start > 1) {
        const tied = ordered.slice(start, end).sort(byIdOnTies)
        for (let i = 0; i < tied.length; i++) ordered[start + i] = tied[i]!
      }
      start = end
    }
    return ordered
  }

  /** The outputs of a job checked afresh in this build, read back from its spill. */
  freshOutputsOf(ordinal: number, pool: RecordPool): { v2: Buffer; v1: Buffer; entry: FreshEntry } {
    const spilled = pool.readSpilled(this.spillWorker[ordinal]!, this.spilled[ordinal]!)
    const { indexedJson, terms } = parseMeta(spilled.meta)
    // The hash stays in the file map to the end of the build: decoded on its own, not sliced from the meta
    // (a slice keeps the whole meta string alive: ~0.75 KB a job, ~700 MB at 1M jobs held to the end).
    const hash = spilled.metaBytes.toString('latin1', 0, spilled.metaBytes.indexOf(0x09))
    return {
      v2: spilled.v2,
      v1: spilled.v1,
      entry: { hash, indexedJson, cacheTail: `${this.freshSummary[ordinal]!}\t${spilled.meta}`, terms },
    }
  }

  /**
   * Lets go of what the write pass needed per record (summaries, cache keys, where outputs were
   * spilled, cache lines, ids): what remains is what the build's end asks for (slugs, statuses).
   */
  releaseOutputs(): void {
    this.freshKeys.clear()
    for (const column of [
      this.freshSummary,
      this.spilled,
      this.spillWorker,
      this.cachedLine,
      this.previousPosition,
      this.ids,
    ])
      column.length = 0
  }

  /** The summary (JSON) of a record checked afresh. */
  freshSummaryOf(ordinal: number): string {
    return this.freshSummary[ordinal]!
  }

  /** How many of the live jobs were reused from the previous build (their files unchanged since it). */
  countLiveReused(live: readonly number[]): number {
    let count = 0
    for (const ordinal of live) if (this.cachedLine[ordinal] !== undefined) count++
    return count
  }

  countWhere(test: (ordinal: number) => boolean): number {
    let count = 0
    for (let ordinal = 0; ordinal < this.size; ordinal++) if (test(ordinal)) count++
    return count
  }

  /** `company`: its index, when the caller has looked it up already. */
  private accept(ordinal: number, summary: RecordSummary, live: boolean, company?: number): void {
    this.ids[ordinal] = summary.id
    this.slugs[ordinal] = summary.slug
    this.status[ordinal] = summary.status
    this.postedAt[ordinal] = summary.posted_at
    this.salaryHigh[ordinal] = summary.salary_high
    // Known: a record whose company is missing has an issue, and the build stops before using this.
    this.company[ordinal] = company ?? this.companyIndex.get(summary.company_id) ?? -1
    this.isLive[ordinal] = Number(live)
  }
}
