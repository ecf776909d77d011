/**
 * Writes a packed-bodies file (core/snapshot.ts PackedBodiesPaths) as the
 * build goes, one body or one run of a previous snapshot's bodies at a time:
 * nothing is held but the lengths (and, layered, the starts) and a small
 * write buffer, and the SHA-256 the manifest records is computed on the way.
 *
 * Whole, every body is written to the file in position order. Layered
 * (core/packed-bodies.ts BodyLayers), the file is only a delta: a body the
 * base file already holds is recorded by where it is there, and only the
 * others are written (new ones, and the ones an earlier delta over the same
 * base held). At 1M jobs a 1% rebuild then writes tens of MB, not 3.4 GB
 * copied from the previous snapshot, read and hashed on the way.
 */
import { endianness } from 'node:os'
import path from 'node:path'
import type { PackedBodies } from '../core/packed-bodies.ts'
import type { PackedBodiesPaths } from '../core/snapshot.ts'
import { BufferedFileWriter } from './buffered-file.ts'
import type { WriteThread } from './write-thread.ts'

const COMMA = Buffer.from(',')

/** A previous snapshot's packed bodies, as the writer copies from them. */
export interface PreviousBodies {
  packed: PackedBodies
  /** Its bodies file (whole, or its delta when layered), open for the write thread to copy from. */
  fd: number
  /** Layered: its base file, open the same way, and that file's size. */
  base?: { fd: number; size: number }
}

export class PackedBodiesWriter {
  private readonly file: BufferedFileWriter
  private lengths = new Uint32Array(1024)
  private count = 0
  /** Layered: each position's start in the layers' space (BodyLayers), and the base's size. */
  private starts: Float64Array | undefined
  private readonly baseSize: number
  /** Bytes written to the file so far. */
  private written = 0
  private scratch: Buffer | undefined

  /**
   * Creates `paths.bodies` under `root` (its folder must exist); writes on `thread` when given.
   * With `baseSize`, the file is a delta over a base file of that many bytes: the previous
   * snapshot's base when it was layered, else its whole file (the caller links it as `paths.base`).
   */
  constructor(root: string, paths: PackedBodiesPaths, thread?: WriteThread, baseSize?: number) {
    this.file = new BufferedFileWriter(path.join(root, paths.bodies), thread)
    this.baseSize = baseSize ?? 0
    if (baseSize !== undefined) this.starts = new Float64Array(1024)
  }

  /** Whether the file is a delta over a base (the caller then links the base and writes the starts). */
  get layered(): boolean {
    return this.starts !== undefined
  }

  /** Appends the next body in date order. */
  add(body: Buffer): void {
    this.reserve(1)
    if (this.starts) this.starts[this.count] = this.baseSize + 1 + this.written + (this.written > 0 ? 1 : 0)
    this.append(body)
    this.lengths[this.count++] = body.length
  }

  /**
   * Appends bodies `from`..`to - 1` of `previous`: written whole, the same bytes as adding them one by
   * one, copied by the write thread from the previous files (never read on this thread); layered, only
   * those not in the base are copied. With `wanted`, returns them joined by commas (read from the
   * previous files), a view valid until the next call; else an empty buffer.
   */
  keepRange(previous: PreviousBodies, from: number, to: number, wanted: boolean): Buffer {
    if (from >= to) return Buffer.alloc(0)
    const packed = previous.packed
    this.reserve(to - from)
    for (let q = from; q < to; q++) this.lengths[this.count + q - from] = packed.lengthOf(q)
    if (!this.starts && !packed.layered && wanted) {
      // Whole over whole: read straight into the chunk being written, no buffer between (the common case).
      if (this.written > 0) this.file.write(COMMA)
      const length = packed.rangeLength(from, to)
      const into = this.file.claim(length)
      const joined = into ? packed.rangeInto(from, to, into) : packed.range(from, to)
      if (!into) this.file.write(joined)
      this.written += (this.written > 0 ? 1 : 0) + length
      this.count += to - from
      return joined
    }
    // Stretches of positions whose bodies follow one another in one previous file (never across the
    // joint of a previous base and delta: a stretch in the base is kept where it is, not copied).
    const joint = previous.base?.size ?? Number.POSITIVE_INFINITY
    for (let first = from; first < to; ) {
      let last = first
      const start = packed.startOf(first)
      let end = start + packed.lengthOf(first)
      while (last + 1 < to && packed.startOf(last + 1) === end + 1 && end <= joint === end + 1 <= joint) {
        last++
        end = packed.startOf(last) + packed.lengthOf(last)
      }
      const inBase = this.starts !== undefined && end <= this.baseSize
      if (inBase) {
        for (let q = first; q <= last; q++) this.starts![this.count + q - from] = packed.startOf(q)
      } else {
        if (this.starts) {
          let at = this.baseSize + 1 + this.written + (this.written > 0 ? 1 : 0)
          for (let q = first; q <= last; q++) {
            this.starts[this.count + q - from] = at
            at += packed.lengthOf(q) + 1
          }
        }
        if (this.written > 0) this.file.write(COMMA)
        this.copySpace(previous, start, end)
        this.written += (this.written > 0 ? 1 : 0) + end - start
      }
      first = last + 1
    }
    this.count += to - from
    if (!wanted) return Buffer.alloc(0)
    const length = packed.rangeLength(from, to)
    if (!this.scratch || this.scratch.length < length) this.scratch = Buffer.allocUnsafeSlow(Math.max(length, 1 << 20))
    return packed.rangeInto(from, to, this.scratch)
  }

  /** Copies bytes [start, end) of the previous bodies' space: its file, or its base, comma and delta. */
  private copySpace(previous: PreviousBodies, start: number, end: number): void {
    const base = previous.base
    if (!base) {
      this.file.copyFrom(previous.fd, start, end - start)
      return
    }
    if (start < base.size) this.file.copyFrom(base.fd, start, Math.min(end, base.size) - start)
    if (start <= base.size && end > base.size) this.file.write(COMMA)
    if (end > base.size + 1) {
      const from = Math.max(start, base.size + 1)
      this.file.copyFrom(previous.fd, from - base.size - 1, end - from)
    }
  }

  private append(body: Buffer): void {
    if (this.written > 0) this.file.write(COMMA)
    this.file.write(body)
    this.written += (this.written > 0 ? 1 : 0) + body.length
  }

  /**
   * Flushes and closes the bodies file; returns the lengths file's bytes (little-endian uint32), the
   * bodies file's hash and, layered, the starts file's bytes (little-endian float64).
   */
  async finish(): Promise<{ lengths: Buffer; bodiesHash: string; starts?: Buffer }> {
    const bodiesHash = await this.file.finish()
    const lengths = Buffer.alloc(this.count * 4)
    if (endianness() === 'LE') lengths.set(new Uint8Array(this.lengths.buffer, 0, this.count * 4))
    else for (let i = 0; i < this.count; i++) lengths.writeUInt32LE(this.lengths[i]!, i * 4)
    if (!this.starts) return { lengths, bodiesHash }
    const starts = Buffer.alloc(this.count * 8)
    if (endianness() === 'LE') starts.set(new Uint8Array(this.starts.buffer, 0, this.count * 8))
    else for (let i = 0; i < this.count; i++) starts.writeDoubleLE(this.starts[i]!, i * 8)
    return { lengths, bodiesHash, starts }
  }

  /** Room for `more` lengths (and starts). */
  private reserve(more: number): void {
    if (this.count + more <= this.lengths.length) return
    const size = Math.max(this.lengths.length * 2, this.count + more)
    const grown = new Uint32Array(size)
    grown.set(this.lengths.subarray(0, this.count))
    this.lengths = grown
    if (this.starts) {
      const starts = new Float64Array(size)
      starts.set(this.starts.subarray(0, this.count))
      this.starts = starts
    }
  }

  close(): void {
    this.file.close()
  }
}
