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
import { CONTENT_HASH_LENGTH } from '../core/content-hash.ts'
import { ENCODINGS } from '../core/snapshot.ts'

/** Brotli quality 6 and gzip level 9: within a few percent of the smallest files, at a fraction of quality 11's time. */
const BROTLI_QUALITY = 6
const GZIP_LEVEL = 9

/** One public file: where it goes, its bytes, and where an identical copy may already be (link instead of writing). */
export interface PublicFile {
  path: string
  /** Its bytes, or parts of them in order (copied once, into the message to the worker). */
  bytes: Buffer | readonly Buffer[]
  /** Also write its brotli and gzip siblings. */
  precompress: boolean
  linkFrom?: string
  /**
   * Hashed on the worker (contentHash), which sends the hash back: the build's own thread
   * neither hashes the bytes nor joins the parts. With `linkFrom`, the file is linked only
   * when its hash is `previous` (the previous snapshot's hash of it).
   */
  hashOnWorker?: { previous?: string }
}

/** Per file of a batch: hard-linked, or written (its previous copy, if any, could not be linked). */
type FileOutcome = 'linked' | 'written'
/** Per file, what was done; and the hash of each file sent with `hashOnWorker` (else undefined). */
export interface BatchOutcome {
  outcomes: FileOutcome[]
  hashes: (string | undefined)[]
}

// Plain JavaScript evaluated by the worker, so it runs however the build was started (tsx, compiled, tests).
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads')
const { linkSync, rmSync, writeFileSync } = require('node:fs')
const { createHash } = require('node:crypto')
const zlib = require('node:zlib')
// As core/content-hash.ts contentHash: the manifest and the ETags must not depend on which thread hashed.
const contentHash = (body) => createHash('sha256').update(body).digest('base64url').slice(0, ${CONTENT_HASH_LENGTH})
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
parentPort.on('message', ({ id, files, bytes, links, members }) => {
  try {
    if (members !== undefined) {
      // Gzip members of a bulk export: each slice of the bytes compressed on its own, sent back end to end.
      const all = Buffer.from(bytes)
      let start = 0
      const out = members.ends.map((end) => {
        const gzipped = zlib.gzipSync(all.subarray(start, end), { level: members.level })
        start = end
        return gzipped
      })
      const joined = new Uint8Array(out.reduce((sum, part) => sum + part.length, 0))
      let offset = 0
      for (const part of out) {
        joined.set(part, offset)
        offset += part.length
      }
      parentPort.postMessage({ id, linked: out.map((part) => part.length), joined: joined.buffer }, [joined.buffer])
      return
    }
    if (links !== undefined) {
      // Relative paths, one a line: linked from the previous snapshot's folder; the ones that fail come back.
      const failed = []
      for (const file of links.paths.split('\\n'))
        if (!link(links.from + file, links.to + file, false)) failed.push(file)
      parentPort.postMessage({ id, linked: failed })
      return
    }
    const all = Buffer.from(bytes)
    const hashes = []
    const linked = files.map(({ path, start, end, precompress, linkFrom, hashOnWorker }, i) => {
      const body = all.subarray(start, end)
      let same = linkFrom !== undefined
      if (hashOnWorker !== undefined) {
        hashes[i] = contentHash(body)
        same &&= hashes[i] === hashOnWorker.previous
      }
      if (same && link(linkFrom, path, precompress)) return 'linked'
      write(path, body, precompress)
      return 'written'
    })
    parentPort.postMessage({ id, linked, hashes })
  } catch (error) {
    parentPort.postMessage({ id, error: String(error && error.message || error) })
  }
})
`

/** A worker's answer: `linked` per file, path or member; `hashes` per file of a write; `joined` the gzip members. */
interface Reply {
  linked: FileOutcome[] | string[] | number[]
  hashes?: (string | undefined)[]
  joined?: ArrayBuffer
}

interface Pending {
  resolve(reply: Reply): void
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
      worker.on('message', ({ id, error, ...reply }: Reply & { id: number; error?: string }) => {
        const task = this.pending.get(id)
        this.pending.delete(id)
        if (error === undefined) task?.resolve(reply)
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
    let total = 0
    for (const file of files) total += byteLength(file.bytes)
    const bytes = new Uint8Array(total)
    let offset = 0
    const placed = files.map(({ path, bytes: body, precompress, linkFrom, hashOnWorker }) => {
      const start = offset
      for (const part of Buffer.isBuffer(body) ? [body] : (body as readonly Buffer[])) {
        bytes.set(part, offset)
        offset += part.length
      }
      return { path, start, end: offset, precompress, linkFrom, hashOnWorker }
    })
    return new Promise((resolve, reject) => {
      this.pending.set(id, {
        resolve: ({ linked, hashes }) => resolve({ outcomes: linked as FileOutcome[], hashes: hashes ?? [] }),
        reject,
      })
      worker.postMessage({ id, files: placed, bytes: bytes.buffer }, [bytes.buffer])
    })
  }

  /**
   * Hard-links each of `paths` (relative, without `\n`) from `fromRoot` to `toRoot`, both
   * ending in `/`; resolves with the paths that could not be linked. The paths travel as
   * one string: an incremental build links ~every job file, and a message of one object
   * per file cost more on the build's own thread than the links cost the worker.
   */
  link(fromRoot: string, toRoot: string, paths: string[]): Promise<string[]> {
    const id = this.nextId++
    const worker = this.workers[this.nextWorker++ % this.workers.length]!
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: ({ linked }) => resolve(linked as string[]), reject })
      worker.postMessage({ id, links: { from: fromRoot, to: toRoot, paths: paths.join('\n') } })
    })
  }

  /**
   * Gzips each of `slices` (end offsets into `bytes`) as a member of its own, on a worker;
   * resolves with the members in order. `bytes` is handed over (transferred), not copied.
   */
  gzipMembers(bytes: Uint8Array, ends: number[], level: number): Promise<Buffer[]> {
    const id = this.nextId++
    const worker = this.workers[this.nextWorker++ % this.workers.length]!
    return new Promise((resolve, reject) => {
      this.pending.set(id, {
        resolve: ({ linked: lengths, joined }) => {
          const all = Buffer.from(joined!)
          let start = 0
          resolve(
            (lengths as number[]).map((length) => {
              start += length
              return all.subarray(start - length, start)
            }),
          )
        },
        reject,
      })
      worker.postMessage({ id, bytes: bytes.buffer, members: { ends, level } }, [bytes.buffer as ArrayBuffer])
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

function byteLength(bytes: Buffer | readonly Buffer[]): number {
  if (Buffer.isBuffer(bytes)) return bytes.length
  let length = 0
  for (const part of bytes as readonly Buffer[]) length += part.length
  return length
}
