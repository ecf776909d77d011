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
import { BuildCacheReader, companyHash, recordKey } from './record-cache.ts'

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

/** The batches of `files`, each record looked up in `cache` when there is one. */
export async function* scanRecords(
  dataDir: string,
  files: readonly string[],
  cache: BuildCacheReader | undefined,
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
      yield { file, raw, ends, spots, sizes, keys: keys.join(''), lines, issues: issues.splice(0) }
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

  constructor(dataDir: string, files: string[], cache?: { file: string; contextHash: string }) {
    const request: ScanRequest = {
      dataDir,
      files,
      cacheFile: cache?.file,
      contextHash: cache?.contextHash,
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
    post({ kind: 'companies', context: await loadCompanyContext(request.dataDir) })
    const cache = await opening
    post({ kind: 'cache', bytes: cache?.shared, size: cache?.size ?? 0 })
    let ahead = 0
    let resume: (() => void) | undefined
    onNext(() => {
      ahead--
      resume?.()
    })
    for await (const batch of scanRecords(request.dataDir, request.files, cache)) {
      post({ kind: 'batch', batch }, [
        batch.raw.buffer,
        batch.ends.buffer,
        batch.spots.buffer,
        batch.sizes.buffer,
        batch.lines.buffer,
      ] as ArrayBuffer[])
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
