/**
 * jobs.parquet written on a thread of its own (parquet-worker.ts): this side
 * gathers the v2 bodies of one row group and hands them over; the worker
 * parses, flattens, encodes, compresses and writes them while the build goes
 * on. A few row groups at most are in flight, so memory stays bounded.
 */
import { Worker } from 'node:worker_threads'
import type { ParquetExportResult, PreviousParquet } from './export-parquet.ts'

/** Rows per row group: at 1M jobs ~120 groups, each a narrow band of posting dates. */
const PARQUET_ROW_GROUP_ROWS = 8192
const MAX_IN_FLIGHT = 3
/** A first row group's buffer: grown as needed, then sized like the previous group. */
const INITIAL_GROUP_BYTES = 1 << 20

// Plain JavaScript evaluated by the worker: it registers tsx there, then imports the TypeScript entry.
const BOOTSTRAP = `
const { workerData } = require('node:worker_threads')
import('tsx/esm/api').then(({ register }) => { register(); return import(workerData.entry) })
`

interface Pending {
  resolve(result: ParquetExportResult | undefined): void
  reject(error: Error): void
}

export class ParquetThread {
  private readonly worker: Worker
  private readonly pending = new Map<number, Pending>()
  private readonly inFlight = new Set<Promise<unknown>>()
  private nextId = 0
  /** The row group being gathered: its bodies end to end, in memory of its own (handed to the worker, not copied). */
  private bodies = Buffer.allocUnsafeSlow(INITIAL_GROUP_BYTES)
  private bytes = 0
  private ends: number[] = []
  private failure: Error | undefined

  /**
   * Writes `file`, and beside it `table`, the table of its column chunks that the next build
   * copies unchanged chunks by; `previous` is the last build's pair.
   */
  constructor(
    file: string,
    table: string,
    previous: PreviousParquet | undefined,
    private readonly rowGroupRows = PARQUET_ROW_GROUP_ROWS,
  ) {
    const entry = new URL('./parquet-worker.ts', import.meta.url).href
    this.worker = new Worker(BOOTSTRAP, { eval: true, workerData: { file, table, previous, entry } })
    this.worker.on('message', (message: { id: number; result?: ParquetExportResult; error?: string }) => {
      const task = this.pending.get(message.id)
      this.pending.delete(message.id)
      if (message.error === undefined) task?.resolve(message.result)
      else task?.reject(new Error(`parquet export failed: ${message.error}`))
    })
    this.worker.on('error', (error) => {
      this.failure = error
      for (const task of this.pending.values()) task.reject(error)
      this.pending.clear()
    })
  }

  /** Adds one job's v2 body (copied: the caller may reuse the buffer). */
  async add(body: Buffer): Promise<void> {
    const needed = this.bytes + body.length
    if (needed > this.bodies.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(needed, this.bodies.length * 2))
      this.bodies.copy(grown, 0, 0, this.bytes)
      this.bodies = grown
    }
    this.bodies.set(body, this.bytes)
    this.bytes = needed
    this.ends.push(needed)
    if (this.ends.length >= this.rowGroupRows) await this.send()
  }

  async finish(): Promise<ParquetExportResult> {
    if (this.ends.length > 0) await this.send()
    await Promise.all(this.inFlight)
    return (await this.request(undefined, undefined))!
  }

  async close(): Promise<void> {
    await this.worker.terminate()
  }

  private async send(): Promise<void> {
    if (this.failure) throw this.failure
    const sent = this.request(this.bodies, this.ends)
    // The next group is about as large as this one: start there rather than growing again.
    this.bodies = Buffer.allocUnsafeSlow(Math.max(INITIAL_GROUP_BYTES, this.bytes))
    this.bytes = 0
    this.ends = []
    this.inFlight.add(sent)
    sent.then(
      () => this.inFlight.delete(sent),
      () => undefined,
    )
    while (this.inFlight.size >= MAX_IN_FLIGHT) await Promise.race(this.inFlight)
  }

  private request(bytes: Uint8Array | undefined, ends: number[] | undefined): Promise<ParquetExportResult | undefined> {
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      if (bytes) this.worker.postMessage({ id, bytes: bytes.buffer, ends }, [bytes.buffer as ArrayBuffer])
      else this.worker.postMessage({ id })
    })
  }
}
