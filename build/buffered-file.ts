/**
 * A file written front to back in large writes, with the SHA-256 the
 * manifest records computed on the way: how the build streams its big
 * private files (packed bodies, the job index, the build cache) without
 * holding them in memory. Given a WriteThread, the writing and hashing
 * happen there, a chunk at a time, and this thread only fills chunks.
 *
 * Whatever is written is copied at once into a chunk that is reused, so
 * callers may hand in slices of buffers they reuse, and a million writes
 * allocate nothing: at 1M jobs, a fresh buffer per flush and per string
 * made the collector run a full collection over a heap of a million
 * records again and again.
 */
import { createHash, type Hash } from 'node:crypto'
import { closeSync, openSync, readSync, writeSync } from 'node:fs'
import type { WriteThread } from './write-thread.ts'

/** Bytes gathered before one write on this thread: a 1M-job file takes a few thousand syscalls. */
const FLUSH_BYTES = 1 << 20

export class BufferedFileWriter {
  private readonly fd: number
  private closed = false
  /** Only when writing on this thread; a WriteThread hashes what it writes. */
  private readonly hash: Hash | undefined
  private scratch: Buffer
  private buffered = 0
  /** Parts of the chunk being filled that the write thread reads from other files (WriteThread.send's fills). */
  private fills: number[] = []

  /**
   * Creates (or truncates) `file`; its folder must exist. `hashed: false` for a file whose hash
   * nobody records (the build cache, ~1 GB at 1M jobs): finish then resolves with ''.
   */
  constructor(
    readonly file: string,
    private readonly thread?: WriteThread,
    private readonly hashed = true,
  ) {
    this.fd = openSync(file, 'w')
    this.hash = thread || !hashed ? undefined : createHash('sha256')
    this.scratch = thread ? thread.takeChunk() : Buffer.allocUnsafe(FLUSH_BYTES)
  }

  write(chunk: Buffer | string): void {
    if (typeof chunk === 'string') {
      // Worst case 3 bytes per UTF-16 unit; a string that may not fit an empty chunk goes as bytes, in pieces.
      if (chunk.length * 3 > this.scratch.length) {
        this.writeBytes(Buffer.from(chunk))
        return
      }
      if (this.buffered + chunk.length * 3 > this.scratch.length) this.flush()
      this.buffered += this.scratch.write(chunk, this.buffered)
      return
    }
    this.writeBytes(chunk)
  }

  /**
   * Appends `length` bytes that the caller puts in the returned view at once, before anything
   * else is written (it is the chunk being filled, sent on at the next write that does not fit):
   * bytes read from another file land there with no copy in between. Undefined when `length` is
   * more than a chunk holds (write them instead).
   */
  claim(length: number): Buffer | undefined {
    if (length > this.scratch.length) return undefined
    if (this.buffered + length > this.scratch.length) this.flush()
    const view = this.scratch.subarray(this.buffered, this.buffered + length)
    this.buffered += length
    return view
  }

  /**
   * Appends bytes [position, position + length) of the file open as `fd`, which must stay open and
   * unchanged until finish: read there by the write thread when there is one (this thread never
   * touches them), else here.
   */
  copyFrom(fd: number, position: number, length: number): void {
    for (let done = 0; done < length; ) {
      if (this.buffered === this.scratch.length) this.flush()
      const part = Math.min(length - done, this.scratch.length - this.buffered)
      if (this.thread) this.fills.push(this.buffered, fd, position + done, part)
      else
        for (let read = 0; read < part; ) {
          const n = readSync(fd, this.scratch, this.buffered + read, part - read, position + done + read)
          if (n === 0) throw new Error(`${this.file}: the file copied from ended early`)
          read += n
        }
      this.buffered += part
      done += part
    }
  }

  /** Flushes and closes; returns the SHA-256 (base64url) of everything written. */
  async finish(): Promise<string> {
    this.flush()
    try {
      if (!this.hashed) {
        await this.thread?.finish(this.fd)
        return ''
      }
      return this.thread ? await this.thread.finish(this.fd) : this.hash!.digest('base64url')
    } finally {
      this.close()
    }
  }

  /** Closes the file, once (after a failed build too: the staging folder is thrown away). */
  close(): void {
    if (this.closed) return
    this.closed = true
    closeSync(this.fd)
  }

  private writeBytes(bytes: Buffer): void {
    // Most writes are a few KB and fit: TypedArray#set costs a fraction of Buffer#copy's checks.
    if (this.buffered + bytes.length <= this.scratch.length) {
      this.scratch.set(bytes, this.buffered)
      this.buffered += bytes.length
      return
    }
    for (let offset = 0; offset < bytes.length; ) {
      if (this.buffered === this.scratch.length) this.flush()
      const copied = bytes.copy(this.scratch, this.buffered, offset)
      this.buffered += copied
      offset += copied
    }
  }

  private flush(): void {
    if (this.buffered === 0) return
    if (this.thread) {
      this.thread.send(
        this.fd,
        this.scratch,
        this.buffered,
        this.hashed,
        this.fills.length > 0 ? this.fills : undefined,
      )
      if (this.fills.length > 0) this.fills = []
      this.scratch = this.thread.takeChunk()
    } else {
      const bytes = this.scratch.subarray(0, this.buffered)
      this.hash?.update(bytes)
      for (let written = 0; written < bytes.length; )
        written += writeSync(this.fd, bytes, written, bytes.length - written)
    }
    this.buffered = 0
  }
}
