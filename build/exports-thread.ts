/**
 * jobs.ndjson.gz and jobs.parquet written on a thread of their own
 * (exports-worker.ts): this side only copies each new v2 body and its content
 * hash into a batch and hands the batch over, one message per ~1 MB of
 * bodies; the worker cuts the runs of the NDJSON file, copies or compresses
 * its members, and parses, flattens, encodes and writes the Parquet row
 * groups while the build goes on. A job republished unchanged goes as its
 * position in the previous snapshot's packed v2 bodies, which the worker
 * reads itself: at 1M jobs the build's own thread no longer copies ~1.6 GB of
 * bodies it already has on disk. A few batches at most are in flight, so
 * memory stays bounded.
 */
import { Worker } from 'node:worker_threads'
import type { NdjsonExportResult } from './export-ndjson.ts'
import type { ParquetExportResult, PreviousParquet } from './export-parquet.ts'

/** Rows per row group: at 1M jobs ~120 groups, each a narrow band of posting dates. */
const PARQUET_ROW_GROUP_ROWS = 8192
/** Bodies per message: a few hundred jobs, so messages stay few and the worker is never idle for long. */
const BATCH_BYTES = 1 << 20
/** Jobs per message at most (those read from the previous bodies take no bytes here): ~3 MB for the worker to read. */
const BATCH_JOBS = 2048
/** Batches sent but not yet taken in by the worker, at most: bounds memory when the worker falls behind. */
const MAX_IN_FLIGHT = 16

// Plain JavaScript evaluated by the worker: it registers tsx there, then imports the TypeScript entry.
const BOOTSTRAP = `
const { workerData } = require('node:worker_threads')
import('tsx/esm/api').then(({ register }) => { register(); return import(workerData.entry) })
`

/** Where the worker writes, and what of the previous snapshot it may copy from. */
export interface ExportsThreadFiles {
  ndjson: { file: string; table: string; previous?: { file: string; table: string } }
  parquet: { file: string; table: string; previous?: PreviousParquet }
  /** The previous snapshot's folder: its packed v2 bodies are where addPrevious's positions are read. */
  previousBodies?: string
  parquetRowGroupRows: number
}

/**
 * One batch: `bytes` holds the new bodies end to end (body i ends at `ends[i]`); `runs` says where each
 * job comes from, in order, as pairs (from, count): `count` jobs from `bytes` when from is -1, else the
 * previous bodies at positions from..from + count - 1; `hashes` their content hashes, one a line.
 */
export interface ExportsBatch {
  bytes: ArrayBuffer
  ends: number[]
  runs: number[]
  hashes: string
}

export interface ExportsThreadResult {
  jobs: NdjsonExportResult
  parquet: ParquetExportResult
}

interface Pending {
  resolve(result: ExportsThreadResult | undefined): void
  reject(error: Error): void
}

export class ExportsThread {
  private readonly worker: Worker
  private readonly pending = new Map<number, Pending>()
  private readonly inFlight = new Set<Promise<unknown>>()
  private nextId = 0
  /** The batch being gathered: its bodies end to end, in memory of its own (handed to the worker, not copied). */
  private bodies = Buffer.allocUnsafeSlow(BATCH_BYTES + (BATCH_BYTES >> 1))
  private bytes = 0
  private ends: number[] = []
  private runs: number[] = []
  private hashes: string[] = []
  private failure: Error | undefined

  constructor(files: Omit<ExportsThreadFiles, 'parquetRowGroupRows'>, rowGroupRows = PARQUET_ROW_GROUP_ROWS) {
    const entry = new URL('./exports-worker.ts', import.meta.url).href
    const workerData: ExportsThreadFiles & { entry: string } = { ...files, parquetRowGroupRows: rowGroupRows, entry }
    this.worker = new Worker(BOOTSTRAP, { eval: true, workerData })
    this.worker.on('message', (message: { id: number; result?: ExportsThreadResult; error?: string }) => {
      const task = this.pending.get(message.id)
      this.pending.delete(message.id)
      if (message.error === undefined) task?.resolve(message.result)
      else task?.reject(new Error(`bulk export failed: ${message.error}`))
    })
    this.worker.on('error', (error) => {
      this.failure = error
      for (const task of this.pending.values()) task.reject(error)
      this.pending.clear()
    })
  }

  /**
   * Adds one job's v2 body (copied: the caller may reuse the buffer) and its content hash.
   * Returns a promise only when a batch went out and the worker is behind: then wait for it.
   */
  add(body: Uint8Array, hash: string): Promise<void> | undefined {
    const needed = this.bytes + body.length
    if (needed > this.bodies.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(needed, this.bodies.length * 2))
      this.bodies.copy(grown, 0, 0, this.bytes)
      this.bodies = grown
    }
    this.bodies.set(body, this.bytes)
    this.bytes = needed
    this.ends.push(needed)
    this.extendRun(-1)
    this.hashes.push(hash)
    if (needed >= BATCH_BYTES || this.hashes.length >= BATCH_JOBS) return this.send()
    return undefined
  }

  /**
   * Adds the job at `position` of the previous snapshot's packed v2 bodies (read there by the
   * worker), with its content hash; a promise as for add.
   */
  addPrevious(position: number, hash: string): Promise<void> | undefined {
    this.extendRun(position)
    this.hashes.push(hash)
    if (this.hashes.length >= BATCH_JOBS) return this.send()
    return undefined
  }

  /** Counts one more job from `from` (-1: the batch's bytes), in the last run when it continues it. */
  private extendRun(from: number): void {
    const last = this.runs.length - 2
    if (last >= 0) {
      const lastFrom = this.runs[last]!
      const count = this.runs[last + 1]!
      if (from === -1 ? lastFrom === -1 : lastFrom >= 0 && lastFrom + count === from) {
        this.runs[last + 1] = count + 1
        return
      }
    }
    this.runs.push(from, 1)
  }

  async finish(): Promise<ExportsThreadResult> {
    if (this.hashes.length > 0) await this.send()
    await Promise.all(this.inFlight)
    return (await this.request(undefined))!
  }

  async close(): Promise<void> {
    await this.worker.terminate()
  }

  private async send(): Promise<void> {
    if (this.failure) throw this.failure
    const sent = this.request({ bytes: this.bodies, ends: this.ends, runs: this.runs, hashes: this.hashes.join('\n') })
    // A batch of jobs read from the previous bodies only keeps its (unused) buffer.
    if (this.ends.length > 0) this.bodies = Buffer.allocUnsafeSlow(BATCH_BYTES + (BATCH_BYTES >> 1))
    this.bytes = 0
    this.ends = []
    this.runs = []
    this.hashes = []
    this.inFlight.add(sent)
    sent.then(
      () => this.inFlight.delete(sent),
      () => undefined,
    )
    while (this.inFlight.size >= MAX_IN_FLIGHT) await Promise.race(this.inFlight)
  }

  private request(batch: (Omit<ExportsBatch, 'bytes'> & { bytes: Buffer }) | undefined) {
    const id = this.nextId++
    return new Promise<ExportsThreadResult | undefined>((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      if (batch === undefined) this.worker.postMessage({ id })
      else if (batch.ends.length === 0) {
        // Nothing of its own to hand over: its buffer stays here, to be filled next.
        const message: ExportsBatch & { id: number } = { ...batch, id, bytes: new ArrayBuffer(0) }
        this.worker.postMessage(message)
      } else {
        const message: ExportsBatch & { id: number } = { ...batch, id, bytes: batch.bytes.buffer as ArrayBuffer }
        this.worker.postMessage(message, [message.bytes])
      }
    })
  }
}
