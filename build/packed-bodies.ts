/**
 * Writes a packed-bodies pair (core/snapshot.ts PackedBodiesPaths) as the
 * build goes, one body at a time: nothing is held but a small write buffer,
 * and the SHA-256 the manifest records is computed on the way.
 */
import { createHash, type Hash } from 'node:crypto'
import { closeSync, openSync, writeSync } from 'node:fs'
import path from 'node:path'
import type { PackedBodiesPaths } from '../core/snapshot.ts'

/** Bytes gathered before one write: large enough that a 1M-job file takes a few thousand syscalls. */
const FLUSH_BYTES = 1 << 20
const COMMA = Buffer.from(',')

export class PackedBodiesWriter {
  private readonly fd: number
  private closed = false
  private readonly hash: Hash = createHash('sha256')
  private readonly lengths: number[] = []
  private chunks: Buffer[] = []
  private buffered = 0

  /** Creates `paths.bodies` under `root` (its folder must exist). */
  constructor(root: string, paths: PackedBodiesPaths) {
    this.fd = openSync(path.join(root, paths.bodies), 'w')
  }

  /** Appends the next body in date order. */
  add(body: Buffer): void {
    if (this.lengths.length > 0) this.push(COMMA)
    this.push(body)
    this.lengths.push(body.length)
  }

  /** Flushes and closes the bodies file; returns the lengths file's bytes and both files' hashes. */
  finish(): { lengths: Buffer; bodiesHash: string } {
    this.flush()
    this.close()
    const lengths = Buffer.alloc(this.lengths.length * 4)
    for (let i = 0; i < this.lengths.length; i++) lengths.writeUInt32LE(this.lengths[i]!, i * 4)
    return { lengths, bodiesHash: this.hash.digest('base64url') }
  }

  /** Closes the file, once (after a failed build too: the staging folder is thrown away). */
  close(): void {
    if (this.closed) return
    this.closed = true
    closeSync(this.fd)
  }

  private push(bytes: Buffer): void {
    this.hash.update(bytes)
    this.chunks.push(bytes)
    this.buffered += bytes.length
    if (this.buffered >= FLUSH_BYTES) this.flush()
  }

  private flush(): void {
    if (this.buffered === 0) return
    const bytes = Buffer.concat(this.chunks, this.buffered)
    let written = 0
    while (written < bytes.length) written += writeSync(this.fd, bytes, written)
    this.chunks = []
    this.buffered = 0
  }
}
