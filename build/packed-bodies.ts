/**
 * Writes a packed-bodies pair (core/snapshot.ts PackedBodiesPaths) as the
 * build goes, one body at a time: nothing is held but the lengths and a small
 * write buffer, and the SHA-256 the manifest records is computed on the way.
 */
import { endianness } from 'node:os'
import path from 'node:path'
import type { PackedBodies } from '../core/packed-bodies.ts'
import type { PackedBodiesPaths } from '../core/snapshot.ts'
import { BufferedFileWriter } from './buffered-file.ts'
import type { WriteThread } from './write-thread.ts'

const COMMA = Buffer.from(',')

export class PackedBodiesWriter {
  private readonly file: BufferedFileWriter
  private lengths = new Uint32Array(1024)
  private count = 0

  /** Creates `paths.bodies` under `root` (its folder must exist); writes on `thread` when given. */
  constructor(root: string, paths: PackedBodiesPaths, thread?: WriteThread) {
    this.file = new BufferedFileWriter(path.join(root, paths.bodies), thread)
  }

  /** Appends the next body in date order. */
  add(body: Buffer): void {
    if (this.count > 0) this.file.write(COMMA)
    this.file.write(body)
    this.reserve(1)
    this.lengths[this.count++] = body.length
  }

  /**
   * Appends bodies `from`..`to - 1` of `previous` (a previous snapshot's packed bodies, whose
   * lengths are `lengths`) at once: the same bytes as adding them one by one, read from the
   * previous file straight into the chunk being written. Returns them, joined by commas, as a
   * view valid until the next add.
   */
  addRange(previous: PackedBodies, from: number, to: number, lengths: Uint32Array): Buffer {
    if (from >= to) return Buffer.alloc(0)
    if (this.count > 0) this.file.write(COMMA)
    const into = this.file.claim(previous.rangeLength(from, to))
    const joined = into ? previous.rangeInto(from, to, into) : previous.range(from, to)
    if (!into) this.file.write(joined)
    this.reserve(to - from)
    this.lengths.set(lengths.subarray(from, to), this.count)
    this.count += to - from
    return joined
  }

  /**
   * Appends bodies `from`..`to - 1` of a previous snapshot's packed bodies file, open as `fd`, where
   * body i starts at `offsets[i]` (and offsets[to] - 1 is where body to - 1 ends): the same bytes as
   * addRange, but copied by the write thread from that file, never read on this one. `fd` stays open
   * until finish.
   */
  copyRange(fd: number, offsets: Float64Array, from: number, to: number, lengths: Uint32Array): void {
    if (from >= to) return
    if (this.count > 0) this.file.write(COMMA)
    this.file.copyFrom(fd, offsets[from]!, offsets[to]! - 1 - offsets[from]!)
    this.reserve(to - from)
    this.lengths.set(lengths.subarray(from, to), this.count)
    this.count += to - from
  }

  /** Flushes and closes the bodies file; returns the lengths file's bytes (little-endian uint32) and the bodies' hash. */
  async finish(): Promise<{ lengths: Buffer; bodiesHash: string }> {
    const bodiesHash = await this.file.finish()
    const lengths = Buffer.alloc(this.count * 4)
    if (endianness() === 'LE') lengths.set(new Uint8Array(this.lengths.buffer, 0, this.count * 4))
    else for (let i = 0; i < this.count; i++) lengths.writeUInt32LE(this.lengths[i]!, i * 4)
    return { lengths, bodiesHash }
  }

  /** Room for `more` lengths. */
  private reserve(more: number): void {
    if (this.count + more <= this.lengths.length) return
    const grown = new Uint32Array(Math.max(this.lengths.length * 2, this.count + more))
    grown.set(this.lengths.subarray(0, this.count))
    this.lengths = grown
  }

  close(): void {
    this.file.close()
  }
}
