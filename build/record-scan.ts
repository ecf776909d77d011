/**
 * Pass 1's reading: the job files' record texts, each one's cache key (a
 * SHA-1 of its bytes) and its line in the previous build's cache, a batch at
 * a time. At 1M jobs that is 1.3 GB read, split and hashed and a million
 * lookups, ~5 s of one thread: on a thread of its own (started before the
 * companies and the previous manifest are loaded, so that it runs while
 * they are) the build's own thread is left the summaries and the checks.
 * Small datasets are scanned on the build's own thread, the same way.
 */
import { Worker } from 'node:worker_threads'
import type { DatasetIssue, RecordSource } from './issues.ts'
import { readRecordTexts } from './read-dataset.ts'
import type { DatasetCompany } from '../core/schema/dataset.ts'
import { loadCompanies } from './load-dataset.ts'
import { isLiveAt, type RecordSummary } from './job-record.ts'
import { BuildCacheReader, CachedRecord, companyHash, recordKey } from './record-cache.ts'

/** Characters of a record key (a SHA-1 in base64url): the batch's keys are one string of them. */
const KEY_LENGTH = 27

/** Batches the scanning thread may be ahead of the build's (~4 MB each). */
const BATCHES_AHEAD = 8

/** One read's worth of records, as flat arrays (a message of a few objects, not thousands). */
export interface ScannedBatch {
  /** Index of the file in the scanned list. */
  file: number
  /** The records' bytes, one after the other; record n is `raw[ends[n - 1] .. ends[n])`. */
  raw: Uint8Array
  ends: Uint32Array
  /** Where each came from: its NDJSON line, -(index + 1) in a JSON array, or 0 for a file of one record. */
  spots: Int32Array
  /** Bytes of the file each took up, for progress. */
  sizes: Uint32Array
  /** Each record's cache key, KEY_LENGTH characters each. */
  keys: string
  /** Each record's line in the previous build's cache, or -1. */
  lines: Float64Array
  /** Problems found reading, for the records' lines in this batch (in file order). */
  issues: DatasetIssue[]
  /** What the cache says of the records taken from it, when the scan was told how to choose them (CacheReuse). */
  reused?: ReusedRecords
}

/** A record's status, by its code in ReusedRecords.status. */
export const STATUSES: readonly RecordSummary['status'][] = ['live', 'closed']

/**
 * The summaries of a batch's records that are taken from the previous build's
 * cache, as columns (one entry per record of the batch; meaningful where
 * `taken` is 1). Parsed and judged by the scanning thread, which has room in
 * pass 1, where the build's own thread is the one waited on: parsing a
 * million cached summaries there was ~3.5 s of its time at 1M jobs, and their
 * objects more for its collector.
 */
export interface ReusedRecords {
  /** 1 where the cache's line is used as it is (CacheReuse says when). */
  taken: Uint8Array
  /** Its position in the previous snapshot's packed bodies, -1 when that snapshot did not publish it. */
  position: Int32Array
  /** Index of its company in the dataset's companies. */
  company: Int32Array
  /** Code in STATUSES. */
  status: Uint8Array
  /** 1 when published by this build (isLiveAt). */
  live: Uint8Array
  postedAt: Float64Array
  /** The summary's salary_high, NaN when it has none. */
  salaryHigh: Float64Array
  /** The taken records' ids and slugs, in batch order, each followed by a newline (neither may hold one). */
  names: string
}

/**
 * Which cached records a build takes as they are: found in the cache, with
 * their company record unchanged, and published by the previous build unless
 * they would not be now (a job that was closed or expired and now is live
 * has no bodies to carry over).
 */
export class CacheReuse {
  private readonly companyIndex: Map<string, number>
  private readonly companyHashes: readonly string[]
  private readonly cached = new CachedRecord()

  constructor(
    private readonly cache: BuildCacheReader,
    companies: CompanyContext,
    private readonly nowMs: number,
  ) {
    this.companyIndex = new Map(companies.companies.map((company, index) => [company.id, index]))
    this.companyHashes = companies.hashes
  }

  /** The columns for a batch whose records were found at `lines` (-1: not found). */
  judge(lines: Float64Array): ReusedRecords {
    const count = lines.length
    const out: ReusedRecords = {
      taken: new Uint8Array(count),
      position: new Int32Array(count),
      company: new Int32Array(count),
      status: new Uint8Array(count),
      live: new Uint8Array(count),
      postedAt: new Float64Array(count),
      salaryHigh: new Float64Array(count),
      names: '',
    }
    const names: string[] = []
    const cached = this.cached
    for (let n = 0; n < count; n++) {
      const line = lines[n]!
      if (line < 0) continue
      this.cache.readAt(line, cached)
      const summary = cached.summary
      const company = this.companyIndex.get(summary.company_id)
      const status = STATUSES.indexOf(summary.status)
      const live = isLiveAt(summary, this.nowMs)
      if (
        company === undefined ||
        status < 0 ||
        !this.cache.companyHashIs(cached, this.companyHashes[company]!) ||
        (cached.position < 0 && live)
      )
        continue
      out.taken[n] = 1
      out.position[n] = cached.position
      out.company[n] = company
      out.status[n] = status
      out.live[n] = Number(live)
      out.postedAt[n] = summary.posted_at
      out.salaryHigh[n] = summary.salary_high ?? Number.NaN
      names.push(summary.id, summary.slug)
    }
    out.names = names.length > 0 ? `${names.join('\n')}\n` : ''
    return out
  }
}

/** The ArrayBuffers of a batch, to transfer rather than copy. */
function batchBuffers(batch: ScannedBatch): ArrayBuffer[] {
  const views: ArrayBufferView[] = [batch.raw, batch.ends, batch.spots, batch.sizes, batch.lines]
  const reused = batch.reused
  if (reused)
    views.push(
      reused.taken,
      reused.position,
      reused.company,
      reused.status,
      reused.live,
      reused.postedAt,
      reused.salaryHigh,
    )
  return views.map((view) => view.buffer as ArrayBuffer)
}

/** A record's source from a file name and a ScannedBatch spot. */
export function sourceAt(file: string, spot: number): RecordSource {
  return spot > 0 ? { file, line: spot } : spot < 0 ? { file, index: -spot - 1 } : { file }
}

/** A ScannedBatch spot from a record's source. */
function spotOf(source: RecordSource): number {
  return source.line ?? (source.index !== undefined ? -(source.index + 1) : 0)
}

/** Record `n`'s cache key. */
export function keyAt(batch: ScannedBatch, n: number): string {
  return batch.keys.slice(n * KEY_LENGTH, (n + 1) * KEY_LENGTH)
}

/**
 * The batches of `files`, each record looked up in `cache` when there is one,
 * and those to take from it chosen by `reuse` when given.
 */
export async function* scanRecords(
  dataDir: string,
  files: readonly string[],
  cache: BuildCacheReader | undefined,
  reuse?: CacheReuse,
): AsyncGenerator<ScannedBatch> {
  for (const [file, name] of files.entries()) {
    const issues: DatasetIssue[] = []
    for await (const texts of readRecordTexts(dataDir, name, issues)) {
      let length = 0
      for (const { raw } of texts) length += raw.length
      const raw = new Uint8Array(length)
      const ends = new Uint32Array(texts.length)
      const spots = new Int32Array(texts.length)
      const sizes = new Uint32Array(texts.length)
      const lines = new Float64Array(texts.length)
      const keys: string[] = []
      let at = 0
      for (const [n, text] of texts.entries()) {
        raw.set(text.raw, at)
        at += text.raw.length
        ends[n] = at
        spots[n] = spotOf(text.source)
        sizes[n] = text.bytes
        const key = recordKey(text.raw)
        if (key.length !== KEY_LENGTH) throw new Error(`a record key of ${key.length} characters`)
        keys.push(key)
        lines[n] = cache ? cache.find(key) : -1
      }
      yield {
        file,
        raw,
        ends,
        spots,
        sizes,
        keys: keys.join(''),
        lines,
        issues: issues.splice(0),
        reused: reuse?.judge(lines),
      }
    }
    // Problems found after the last batch (a file that cannot be read, or has no record).
    if (issues.length > 0)
      yield {
        file,
        raw: new Uint8Array(0),
        ends: new Uint32Array(0),
        spots: new Int32Array(0),
        sizes: new Uint32Array(0),
        keys: '',
        lines: new Float64Array(0),
        issues,
      }
  }
}

/** The dataset's companies, validated, with their cache hashes and the problems found. */
export interface CompanyContext {
  companies: DatasetCompany[]
  hashes: string[]
  issues: DatasetIssue[]
}

/** Loads the companies (on the scanning thread, when there is one: ~2 s of validation at 1M jobs' 50k). */
export async function loadCompanyContext(dataDir: string): Promise<CompanyContext> {
  const issues: DatasetIssue[] = []
  const companies = await loadCompanies(dataDir, issues)
  return { companies, hashes: companies.map(companyHash), issues }
}

interface ScanRequest {
  dataDir: string
  files: string[]
  /** The previous build's cache and the context it must have been made in, when there may be one. */
  cacheFile?: string
  contextHash?: string
  /** The build's reference time (epoch ms), for which cached records are published now. */
  nowMs: number
  entry: string
}

type ScanMessage =
  | { kind: 'companies'; context: CompanyContext }
  | { kind: 'cache'; bytes?: SharedArrayBuffer; size: number }
  | { kind: 'batch'; batch: ScannedBatch }
  | { kind: 'done' }
  | { kind: 'error'; message: string }

// Plain JavaScript evaluated by the worker: it registers tsx there (a worker does not inherit the main
// thread's loader hooks), then imports the TypeScript entry, however the build was started.
const BOOTSTRAP = `
const { workerData } = require('node:worker_threads')
import('tsx/esm/api').then(({ register }) => { register(); return import(workerData.entry) })
`

/** scanRecords on a worker thread: started at once, its batches taken in order by `batches()`. */
export class ScanThread {
  private readonly worker: Worker
  private readonly queue: ScanMessage[] = []
  private wake: (() => void) | undefined
  private failure: Error | undefined
  /** The previous build's cache, read (shared) by the scanning thread: undefined when there is none to use. */
  readonly cache: Promise<BuildCacheReader | undefined>
  /** The companies, loaded by the scanning thread before it starts on the job files. */
  readonly companies: Promise<CompanyContext>

  constructor(dataDir: string, files: string[], nowMs: number, cache?: { file: string; contextHash: string }) {
    const request: ScanRequest = {
      dataDir,
      files,
      cacheFile: cache?.file,
      contextHash: cache?.contextHash,
      nowMs,
      entry: new URL('./record-scan-worker.ts', import.meta.url).href,
    }
    this.worker = new Worker(BOOTSTRAP, { eval: true, workerData: request })
    // A build that fails before it takes every batch must not be kept from exiting by this thread.
    this.worker.unref()
    let opened: (cache: BuildCacheReader | undefined) => void = () => {}
    this.cache = new Promise((resolve) => {
      opened = resolve
    })
    let loaded: (context: CompanyContext) => void = () => {}
    let failed: (error: Error) => void = () => {}
    this.companies = new Promise((resolve, reject) => {
      loaded = resolve
      failed = reject
    })
    // Awaited only on the way to pass 1: a thread that fails before then fails the build there.
    this.companies.catch(() => {})
    this.worker.on('message', (message: ScanMessage) => {
      if (message.kind === 'companies') {
        loaded(message.context)
        return
      }
      if (message.kind === 'cache') {
        opened(message.bytes ? BuildCacheReader.over(message.bytes, message.size) : undefined)
        return
      }
      this.queue.push(message)
      this.wake?.()
    })
    this.worker.on('error', (error) => {
      this.failure ??= error
      failed(this.failure)
      opened(undefined)
      this.wake?.()
    })
    this.worker.on('exit', () => {
      this.failure ??= new Error('the record scanning thread stopped')
      failed(this.failure)
      opened(undefined)
      this.wake?.()
    })
  }

  /** The batches, in file order; throws what the scanning thread threw. */
  async *batches(): AsyncGenerator<ScannedBatch> {
    for (;;) {
      const message = this.queue.shift()
      if (!message) {
        if (this.failure) throw this.failure
        await new Promise<void>((resolve) => {
          this.wake = resolve
        })
        this.wake = undefined
        continue
      }
      if (message.kind === 'done') return
      if (message.kind === 'error') {
        this.failure ??= new Error(message.message)
        throw this.failure
      }
      if (message.kind !== 'batch') continue
      yield message.batch
      // Taken: the scanning thread may read one more.
      this.worker.postMessage('next')
    }
  }

  async close(): Promise<void> {
    this.worker.removeAllListeners('exit')
    await this.worker.terminate()
  }
}

/** The scanning thread's side (record-scan-worker.ts). */
export async function runScanThread(
  request: ScanRequest,
  post: (message: ScanMessage, transfer?: ArrayBuffer[]) => void,
  onNext: (listener: () => void) => void,
): Promise<void> {
  try {
    // The cache is read (I/O) while the companies are validated (CPU).
    const opening =
      request.cacheFile && request.contextHash
        ? BuildCacheReader.open(request.cacheFile, request.contextHash, true)
        : undefined
    const companies = await loadCompanyContext(request.dataDir)
    post({ kind: 'companies', context: companies })
    const cache = await opening
    post({ kind: 'cache', bytes: cache?.shared, size: cache?.size ?? 0 })
    let ahead = 0
    let resume: (() => void) | undefined
    onNext(() => {
      ahead--
      resume?.()
    })
    const reuse = cache && new CacheReuse(cache, companies, request.nowMs)
    for await (const batch of scanRecords(request.dataDir, request.files, cache, reuse)) {
      post({ kind: 'batch', batch }, batchBuffers(batch))
      ahead++
      while (ahead >= BATCHES_AHEAD)
        await new Promise<void>((resolve) => {
          resume = resolve
        })
      resume = undefined
    }
    post({ kind: 'done' })
  } catch (error) {
    post({ kind: 'error', message: (error as Error).message ?? String(error) })
  }
}
