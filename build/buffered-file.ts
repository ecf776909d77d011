/**
 * A file written front to back in large writes, with the SHA-256 the
 * manifest records computed on the way: how the build streams its big
 * private files (packed bodies, the job index, the build cache) without
 * holding them in memory.
 */
import { createHash, type Hash } from 'node:crypto'
import { closeSync, openSync, write as writeAsync, writeSync } from 'node:fs'

/** Bytes gathered before one write: large enough that a 1M-job file takes a few thousand syscalls. */
const FLUSH_BYTES = 1 << 20
/**
 * Writes left to the thread pool at once, so the build's CPU work goes on
 * while the kernel copies; past this many the next one is made
 * synchronously. Each write names its position, so completion order is free.
 */
const MAX_PENDING_WRITES = 8

export class BufferedFileWriter {
  private readonly fd: number
  private closed = false
  private readonly hash: Hash = createHash('sha256')
  /** Text and bytes waiting for the next write; runs of text become bytes in one conversion. */
  private chunks: (Buffer | string)[] = []
  private buffered = 0
  private position = 0
  private readonly pending = new Set<Promise<void>>()
  private failure: Error | undefined

  /** Creates (or truncates) `file`; its folder must exist. */
  constructor(readonly file: string) {
    this.fd = openSync(file, 'w')
  }

  write(chunk: Buffer | string): void {
    this.chunks.push(chunk)
    // A string's length undercounts its UTF-8 bytes; it only paces the flushes.
    this.buffered += chunk.length
    if (this.buffered >= FLUSH_BYTES) this.flush()
  }

  /** Flushes, waits for every write and closes; returns the SHA-256 (base64url) of everything written. */
  async finish(): Promise<string> {
    this.flush()
    await Promise.all(this.pending)
    this.close()
    if (this.failure) throw this.failure
    return this.hash.digest('base64url')
  }

  /** Closes the file, once (after a failed build too: the staging folder is thrown away; a write still under way then fails, unseen). */
  close(): void {
    if (this.closed) return
    this.closed = true
    closeSync(this.fd)
  }

  private flush(): void {
    if (this.failure) throw this.failure
    if (this.buffered === 0) return
    const parts: Buffer[] = []
    let text: string[] = []
    for (const chunk of this.chunks) {
      if (typeof chunk === 'string') {
        text.push(chunk)
        continue
      }
      if (text.length > 0) parts.push(Buffer.from(text.join('')))
      text = []
      parts.push(chunk)
    }
    if (text.length > 0) parts.push(Buffer.from(text.join('')))
    const bytes = Buffer.concat(parts)
    this.hash.update(bytes)
    const position = this.position
    this.position += bytes.length
    this.chunks = []
    this.buffered = 0
    if (this.pending.size >= MAX_PENDING_WRITES) {
      for (let written = 0; written < bytes.length; ) written += writeSync(this.fd, bytes, written, bytes.length - written, position + written)
      return
    }
    const done: Promise<void> = this.writeAt(bytes, position)
      .catch((error: Error) => {
        this.failure ??= error
      })
      .finally(() => this.pending.delete(done))
    this.pending.add(done)
  }

  private async writeAt(bytes: Buffer, position: number): Promise<void> {
    for (let written = 0; written < bytes.length; ) {
      written += await new Promise<number>((resolve, reject) =>
        writeAsync(this.fd, bytes, written, bytes.length - written, position + written, (error, n) => (error ? reject(error) : resolve(n))),
      )
    }
  }
}
