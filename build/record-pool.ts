/**
 * Where the per-record work of a build runs (record-batch.ts): on worker
 * threads, one per core, fed batches of raw record texts with a bounded
 * number in flight so reading the dataset never runs far ahead of them; or,
 * with `threads: 0`, on the build's own thread (a worker costs ~0.5 s to
 * start, more than a small dataset takes). Either way each thread of work
 * has a spill file in the staging folder for its outputs.
 */
import { closeSync, openSync, readSync } from 'node:fs'
import path from 'node:path'
import { Worker } from 'node:worker_threads'
import type { RecordSource } from './issues.ts'
import {
  BatchProcessor,
  type BatchContext,
  type RecordBatch,
  type RecordOutcome,
  type Spilled,
} from './record-batch.ts'

/** Records per batch: enough to amortise a message, few enough to keep both workers busy. */
const BATCH_RECORDS = 200
/** Batches in flight per worker. */
const IN_FLIGHT_PER_WORKER = 3

// Plain JavaScript evaluated by the worker: it registers tsx there (a worker does not inherit the main
// thread's loader hooks), then imports the TypeScript entry, however the build was started.
const BOOTSTRAP = `
const { workerData } = require('node:worker_threads')
import('tsx/esm/api').then(({ register }) => { register(); return import(workerData.entry) })
`

interface Pending {
  resolve(outcomes: RecordOutcome[]): void
  reject(error: Error): void
}

export class RecordPool {
  private workers: Worker[] = []
  private readonly inProcess: BatchProcessor | undefined
  private readonly inProcessSpill: number
  private readonly spillPaths: string[]
  private readonly spillFds: number[]
  private readonly pending = new Map<number, Pending>()
  private readonly inFlight = new Set<Promise<void>>()
  private batch: RecordBatch['records'] = []
  private nextId = 0
  private failure: Error | undefined
  private closed = false
  private readBuffer = Buffer.allocUnsafe(1 << 16)

  /**
   * `onOutcomes` receives each batch's outcomes as they arrive (any order
   * across batches) with the index of the spill file that holds their
   * outputs. Spill files go to `spillDir` (the staging folder).
   * `inProcessFirst`: with threads, the first that many records are done on
   * the build's own thread and the workers start only if more come (an
   * incremental build after a small change checks a few hundred records,
   * less than starting the workers costs).
   */
  constructor(
    private readonly context: BatchContext,
    spillDir: string,
    private readonly onOutcomes: (outcomes: RecordOutcome[], spill: number) => void,
    private readonly threads: number,
    private inProcessFirst = 0,
  ) {
    // Workers' spill files first; then, when any records may be done here, the build's own thread's.
    const spills = threads === 0 ? 1 : threads + (inProcessFirst > 0 ? 1 : 0)
    this.spillPaths = Array.from({ length: spills }, (_, n) => path.join(spillDir, `.spill-${n}`))
    this.spillFds = this.spillPaths.map((file) => openSync(file, 'w+'))
    this.inProcessSpill = spills - 1
    this.inProcess =
      threads === 0 || inProcessFirst > 0 ? new BatchProcessor(context, this.spillFds[this.inProcessSpill]!) : undefined
    if (threads > 0 && inProcessFirst === 0) this.startWorkers()
  }

  /** Queues one record; resolves when there is room for more. */
  async add(ordinal: number, source: RecordSource, text: string): Promise<void> {
    this.batch.push({ ordinal, source, text })
    if (this.batch.length >= BATCH_RECORDS) await this.dispatch()
  }

  /**
   * Waits for every queued record's outcome, then stops the worker threads: nothing is added
   * after, and each would hold a heap of its own through the rest of the build otherwise. The
   * spill files stay open for readSpilled.
   */
  async drain(): Promise<void> {
    await this.dispatch()
    await Promise.all(this.inFlight)
    if (this.failure) throw this.failure
    const workers = this.workers
    this.workers = []
    await Promise.all(workers.map((worker) => worker.terminate()))
  }

  /**
   * Reads back a spilled job's meta line (as text and as bytes) and bodies
   * (after drain). The bytes are views of one buffer reused by the next
   * call: copy to keep.
   */
  readSpilled(spill: number, spilled: Spilled): { meta: string; metaBytes: Buffer; v2: Buffer; v1: Buffer } {
    const size = spilled.metaLength + spilled.v2Length + spilled.v1Length
    if (this.readBuffer.length < size) this.readBuffer = Buffer.allocUnsafe(Math.max(size, this.readBuffer.length * 2))
    const bytes = this.readBuffer.subarray(0, size)
    for (let read = 0; read < bytes.length; ) {
      const n = readSync(this.spillFds[spill]!, bytes, read, bytes.length - read, spilled.offset + read)
      if (n === 0) throw new Error(`build spill file ${this.spillPaths[spill]} ends early`)
      read += n
    }
    const v2End = spilled.metaLength + spilled.v2Length
    return {
      meta: bytes.toString('utf8', 0, spilled.metaLength),
      metaBytes: bytes.subarray(0, spilled.metaLength),
      v2: bytes.subarray(spilled.metaLength, v2End),
      v1: bytes.subarray(v2End),
    }
  }

  /** The spill files, for removal once the snapshot is written. */
  get spillFiles(): readonly string[] {
    return this.spillPaths
  }

  /** Stops the workers and closes the spill files (after a failure too: call it in a finally). */
  async close(): Promise<void> {
    await Promise.allSettled(this.inFlight)
    if (this.closed) return
    this.closed = true
    await Promise.all(this.workers.map((worker) => worker.terminate()))
    for (const fd of this.spillFds) closeSync(fd)
    this.failAll(new Error('build workers closed'))
  }

  private startWorkers(): void {
    const entry = new URL('./record-worker.ts', import.meta.url).href
    this.workers = this.spillFds
      .slice(0, this.threads)
      .map((spillFd) => this.startWorker({ ...this.context, spillFd, entry }))
  }

  private startWorker(workerData: BatchContext & { spillFd: number; entry: string }): Worker {
    const worker = new Worker(BOOTSTRAP, { eval: true, workerData })
    worker.on('message', (message: { id: number; outcomes?: RecordOutcome[]; error?: string }) => {
      const task = this.pending.get(message.id)
      this.pending.delete(message.id)
      if (message.error === undefined) task?.resolve(message.outcomes!)
      else task?.reject(new Error(`build worker failed: ${message.error}`))
    })
    worker.on('error', (error) => this.failAll(error))
    return worker
  }

  private async dispatch(): Promise<void> {
    if (this.failure) throw this.failure
    if (this.batch.length === 0) return
    const batch: RecordBatch = { id: this.nextId++, records: this.batch }
    this.batch = []
    if (this.threads === 0 || this.inProcessFirst > 0) {
      this.inProcessFirst -= batch.records.length
      this.onOutcomes(this.inProcess!.process(batch), this.inProcessSpill)
      return
    }
    if (this.workers.length === 0) this.startWorkers()
    const spill = batch.id % this.workers.length
    const done = new Promise<RecordOutcome[]>((resolve, reject) => {
      this.pending.set(batch.id, { resolve, reject })
      this.workers[spill]!.postMessage(batch)
    })
    const task = done
      .then((outcomes) => this.onOutcomes(outcomes, spill))
      .catch((error: Error) => {
        this.failure ??= error
      })
      .finally(() => this.inFlight.delete(task))
    this.inFlight.add(task)
    while (this.inFlight.size >= this.workers.length * IN_FLIGHT_PER_WORKER) await Promise.race(this.inFlight)
    if (this.failure) throw this.failure
  }

  private failAll(error: Error): void {
    this.failure ??= error
    for (const task of this.pending.values()) task.reject(error)
    this.pending.clear()
  }
}
