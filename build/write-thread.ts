/**
 * A worker thread that writes and hashes the build's big private files (the
 * packed bodies, the job index, the build cache) while the build's own
 * thread goes on to the next job. Those files are ~3.5 KB a job written and
 * SHA-256 hashed whole: at 100k jobs ~0.6 s of the build's own thread, the
 * thread every incremental build waits on, while the second core sat idle.
 *
 * Chunks are slots of one shared memory block: the build's thread fills a
 * free slot and sends its number; the worker writes and hashes it and frees
 * it. A writer that gets ahead of the disk waits (Atomics.wait) for a free
 * slot instead of buffering the whole file in memory. (Transferring a fresh
 * ArrayBuffer per chunk instead cost ~0.3 ms a message.)
 */
import { Worker } from 'node:worker_threads'

/** Bytes per chunk: large enough that a 1M-job file takes a few thousand writes. */
const CHUNK_BYTES = 4 << 20
/** Chunks in the shared block: one being filled per open file, the rest queued for the worker. */
const SLOTS = 12
/** A worker that frees no slot for this long has failed (it catches its own errors, so this is a last resort). */
const STALL_MS = 120_000

// Plain JavaScript evaluated by the worker, so it runs however the build was started (tsx, compiled, tests).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const { readSync, writeSync } = require('node:fs')
const { createHash } = require('node:crypto')
const { chunks, slots, chunkBytes } = workerData
const busy = new Int32Array(slots)
const files = new Map()
function fileOf(fd) {
  let file = files.get(fd)
  if (!file) files.set(fd, (file = { hash: createHash('sha256'), error: undefined }))
  return file
}
parentPort.on('message', (message) => {
  if (message.kind === 'chunk') {
    const file = fileOf(message.fd)
    if (file.error === undefined) {
      try {
        const bytes = new Uint8Array(chunks, message.slot * chunkBytes, message.length)
        // Ranges of other files to be read into the chunk first: [offset in chunk, fd, position, length] each.
        const fills = message.fills
        if (fills !== undefined)
          for (let f = 0; f < fills.length; f += 4) {
            const at = fills[f], fd = fills[f + 1], position = fills[f + 2], length = fills[f + 3]
            for (let done = 0; done < length; ) {
              const n = readSync(fd, bytes, at + done, length - done, position + done)
              if (n === 0) throw new Error('a file to copy from ended early')
              done += n
            }
          }
        if (message.hashed) file.hash.update(bytes)
        for (let written = 0; written < bytes.length; )
          written += writeSync(message.fd, bytes, written, bytes.length - written)
      } catch (error) {
        file.error = String((error && error.message) || error)
      }
    }
    Atomics.store(busy, message.slot + 1, 0)
    Atomics.add(busy, 0, 1)
    Atomics.notify(busy, 0)
    return
  }
  // 'finish': every chunk of this file was sent before it, so all are written.
  const file = fileOf(message.fd)
  files.delete(message.fd)
  parentPort.postMessage(
    file.error === undefined ? { id: message.id, hash: file.hash.digest('base64url') } : { id: message.id, error: file.error },
  )
})
`

export class WriteThread {
  private readonly worker: Worker
  private readonly chunks = new SharedArrayBuffer(SLOTS * CHUNK_BYTES)
  /** [0]: slots freed so far (what a waiting writer waits on); [1 + slot]: 1 while the slot is taken. */
  private readonly busy = new Int32Array(new SharedArrayBuffer(4 * (SLOTS + 1)))
  private readonly finishing = new Map<number, { resolve(hash: string): void; reject(error: Error): void }>()
  private nextId = 0
  private failure: Error | undefined

  constructor() {
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { chunks: this.chunks, slots: this.busy.buffer, chunkBytes: CHUNK_BYTES },
    })
    this.worker.on('message', ({ id, hash, error }: { id: number; hash?: string; error?: string }) => {
      const task = this.finishing.get(id)
      this.finishing.delete(id)
      if (hash !== undefined) task?.resolve(hash)
      else task?.reject(new Error(error))
    })
    this.worker.on('error', (error) => this.fail(error))
    this.worker.on('exit', () => this.fail(new Error('the build write thread stopped')))
  }

  /** A free chunk to fill, waiting for the worker to free one if need be. */
  takeChunk(): Buffer {
    const started = Date.now()
    for (;;) {
      if (this.failure) throw this.failure
      const freed = Atomics.load(this.busy, 0)
      for (let slot = 0; slot < SLOTS; slot++) {
        if (Atomics.compareExchange(this.busy, slot + 1, 0, 1) === 0)
          return Buffer.from(this.chunks, slot * CHUNK_BYTES, CHUNK_BYTES)
      }
      Atomics.wait(this.busy, 0, freed, 1_000)
      if (Date.now() - started > STALL_MS) throw new Error('the build write thread freed no chunk for 2 minutes')
    }
  }

  /**
   * Hands over the first `length` bytes of `chunk` (from takeChunk) to be appended to `fd` (and
   * hashed, unless `hashed` is false: a file whose hash nobody records); the chunk is the worker's from now on.
   * `fills`: parts of the chunk left for the worker to read from other files first, four numbers each
   * (offset in the chunk, file descriptor, position in that file, length).
   */
  send(fd: number, chunk: Buffer, length: number, hashed = true, fills?: number[]): void {
    if (this.failure) throw this.failure
    this.worker.postMessage({ kind: 'chunk', fd, slot: chunk.byteOffset / CHUNK_BYTES, length, hashed, fills })
  }

  /** Resolves with the SHA-256 (base64url) of all bytes sent hashed for `fd`, once they are all written. */
  finish(fd: number): Promise<string> {
    if (this.failure) return Promise.reject(this.failure)
    const id = this.nextId++
    return new Promise<string>((resolve, reject) => {
      this.finishing.set(id, { resolve, reject })
      this.worker.postMessage({ kind: 'finish', fd, id })
    })
  }

  async close(): Promise<void> {
    this.worker.removeAllListeners('exit')
    await this.worker.terminate()
    this.fail(new Error('the build write thread was closed'))
  }

  private fail(error: Error): void {
    this.failure ??= error
    for (const task of this.finishing.values()) task.reject(error)
    this.finishing.clear()
  }
}
