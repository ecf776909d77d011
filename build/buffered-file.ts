/**
 * A file written front to back in large writes, with the SHA-256 the
 * manifest records computed on the way: how the build streams its big
 * private files (packed bodies, the job index, the build cache) without
 * holding them in memory.
 *
 * Whatever is written is copied at once into one buffer that is reused for
 * the whole file, so callers may hand in slices of buffers they reuse, and
 * a million writes allocate nothing: at 1M jobs, a fresh buffer per flush
 * and per string made the collector run a full collection over a heap of a
 * million records again and again.
 */
import { createHash, type Hash } from 'node:crypto'
import { closeSync, openSync, writeSync } from 'node:fs'

/** Bytes gathered before one write: large enough that a 1M-job file takes a few thousand syscalls. */
const FLUSH_BYTES = 1 << 20

export class BufferedFileWriter {
  private readonly fd: number
  private closed = false
  private readonly hash: Hash = createHash('sha256')
  private readonly scratch = Buffer.allocUnsafe(FLUSH_BYTES)
  private buffered = 0

  /** Creates (or truncates) `file`; its folder must exist. */
  constructor(readonly file: string) {
    this.fd = openSync(file, 'w')
  }

  write(chunk: Buffer | string): void {
    if (typeof chunk === 'string') {
      // Worst case 3 bytes per UTF-16 unit; a string larger than the buffer goes on its own.
      if (chunk.length * 3 > FLUSH_BYTES) {
        this.writeBytes(Buffer.from(chunk))
        return
      }
      if (this.buffered + chunk.length * 3 > FLUSH_BYTES) this.flush()
      this.buffered += this.scratch.write(chunk, this.buffered)
      return
    }
    this.writeBytes(chunk)
  }

  /** Flushes and closes; returns the SHA-256 (base64url) of everything written. */
  async finish(): Promise<string> {
    this.flush()
    this.close()
    return this.hash.digest('base64url')
  }

  /** Closes the file, once (after a failed build too: the staging folder is thrown away). */
  close(): void {
    if (this.closed) return
    this.closed = true
    closeSync(this.fd)
  }

  private writeBytes(bytes: Buffer): void {
    if (this.buffered + bytes.length > FLUSH_BYTES) this.flush()
    if (bytes.length > FLUSH_BYTES) {
      this.hash.update(bytes)
      this.writeAll(bytes)
      return
    }
    bytes.copy(this.scratch, this.buffered)
    this.buffered += bytes.length
  }

  private flush(): void {
    if (this.buffered === 0) return
    const bytes = this.scratch.subarray(0, this.buffered)
    this.hash.update(bytes)
    this.writeAll(bytes)
    this.buffered = 0
  }

  private writeAll(bytes: Buffer): void {
    for (let written = 0; written < bytes.length; )
      written += writeSync(this.fd, bytes, written, bytes.length - written)
  }
}
