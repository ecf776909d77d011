/**
 * Putting public files on disk from worker threads: ~100k small files at
 * 100k jobs. A file unchanged since the previous snapshot is hard-linked
 * from it; any other is written, with brotli and gzip siblings when it is
 * one of the few worth precompressing (see SnapshotFileWriter). zlib's async API builds a stream per call
 * (~3x the cost of the compression itself for 2 KB bodies) and fs/promises
 * costs a thread-pool round trip and a promise per call, so the workers use
 * the sync APIs, files go to them in batches (one message per batch, not per
 * file), and the main thread meanwhile keeps transforming and validating
 * records.
 */
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import { ENCODINGS } from '../core/snapshot.ts'

/** Brotli quality 6 and gzip level 9: within a few percent of the smallest files, at a fraction of quality 11's time. */
const BROTLI_QUALITY = 6
const GZIP_LEVEL = 9

/** One public file: where it goes, its bytes, and where an identical copy already is (link instead of writing). */
export interface PublicFile {
  path: string
  /** Empty for a file sent to be linked only (`linkOnly`). */
  bytes: Buffer
  /** Also write its brotli and gzip siblings. */
  precompress: boolean
  linkFrom?: string
  /** Link from `linkFrom` or report failure: the bytes were not sent. */
  linkOnly?: boolean
}

/** Per file of a batch: hard-linked, written, or (a link-only file whose source is gone) neither. */
type FileOutcome = 'linked' | 'written' | 'failed'
export type BatchOutcome = FileOutcome[]

// Plain JavaScript evaluated by the worker, so it runs however the build was started (tsx, compiled, tests).
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads')
const { linkSync, rmSync, writeFileSync } = require('node:fs')
const zlib = require('node:zlib')
const ENCODINGS = ${JSON.stringify(ENCODINGS.map(({ name, suffix }) => [name, suffix]))}
const SUFFIXES = ['', ...ENCODINGS.map(([, suffix]) => suffix)]
const COMPRESS = {
  br: (body) => zlib.brotliCompressSync(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: ${BROTLI_QUALITY}, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
  gzip: (body) => zlib.gzipSync(body, { level: ${GZIP_LEVEL} }),
}
function write(path, body, precompress) {
  writeFileSync(path, body)
  if (precompress) for (const [name, suffix] of ENCODINGS) writeFileSync(path + suffix, COMPRESS[name](body))
}
// All links or none: after a failed link (the old file is gone), the ones made are removed,
// since writing through a link would change the previous snapshot's file.
function link(from, path, precompress) {
  const suffixes = precompress ? SUFFIXES : ['']
  try {
    for (const suffix of suffixes) linkSync(from + suffix, path + suffix)
    return true
  } catch {
    for (const suffix of suffixes) rmSync(path + suffix, { force: true })
    return false
  }
}
parentPort.on('message', ({ id, files, bytes }) => {
  try {
    const all = Buffer.from(bytes)
    const linked = files.map(({ path, start, end, precompress, linkFrom, linkOnly }) => {
      if (linkFrom !== undefined && link(linkFrom, path, precompress)) return 'linked'
      if (linkOnly) return 'failed'
      write(path, all.subarray(start, end), precompress)
      return 'written'
    })
    parentPort.postMessage({ id, linked })
  } catch (error) {
    parentPort.postMessage({ id, error: String(error && error.message || error) })
  }
})
`

interface Pending {
  resolve(outcome: BatchOutcome): void
  reject(error: Error): void
}

export class CompressPool {
  private readonly workers: Worker[]
  private readonly pending = new Map<number, Pending>()
  private nextId = 0
  private nextWorker = 0

  constructor(size = Math.max(1, availableParallelism())) {
    this.workers = Array.from({ length: size }, () => {
      const worker = new Worker(WORKER_SOURCE, { eval: true })
      worker.on('message', ({ id, linked, error }: { id: number; linked?: BatchOutcome; error?: string }) => {
        const task = this.pending.get(id)
        this.pending.delete(id)
        if (error === undefined) task?.resolve(linked!)
        else task?.reject(new Error(error))
      })
      worker.on('error', (error) => this.failAll(error))
      return worker
    })
  }

  /**
   * Puts each file on disk; resolves, once all are there, with which were linked. The bytes
   * travel as one buffer whose memory is handed over, not copied: cloning a Buffer clones
   * its whole backing store, which for a slice of a larger read is far more than the file.
   */
  write(files: PublicFile[]): Promise<BatchOutcome> {
    const id = this.nextId++
    const worker = this.workers[this.nextWorker++ % this.workers.length]!
    const bytes = new Uint8Array(files.reduce((sum, file) => sum + file.bytes.length, 0))
    let offset = 0
    const placed = files.map(({ path, bytes: body, precompress, linkFrom, linkOnly }) => {
      bytes.set(body, offset)
      offset += body.length
      return { path, start: offset - body.length, end: offset, precompress, linkFrom, linkOnly }
    })
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      worker.postMessage({ id, files: placed, bytes: bytes.buffer }, [bytes.buffer])
    })
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.terminate()))
    this.failAll(new Error('compress pool closed'))
  }

  private failAll(error: Error): void {
    for (const task of this.pending.values()) task.reject(error)
    this.pending.clear()
  }
}
