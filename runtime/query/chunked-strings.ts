/**
 * Many short strings held as a few long ones: one string per 65,536
 * positions, each made in a step of its own. Every single-job response
 * reads its job's hash (its ETag), and slicing a string costs less than
 * decoding bytes per request (~0.5 us of a ~10 us request at 100k jobs), so
 * the hashes are strings, not the file's bytes. One string of all of them
 * (21 MB at 1M jobs) was one copy in one native call: ~10-15 ms of a load
 * alone, 30-55 ms under load, the longest stall of a hot swap.
 */
import { type PackedText, textSlice } from '../../core/packed-text.ts'
import type { Steps } from '../../core/steps.ts'

const CHUNK_BITS = 16
const CHUNK = 1 << CHUNK_BITS

export class ChunkedStrings {
  private constructor(
    private readonly chunks: string[],
    /** offsets[p]..offsets[p + 1] is position p's string, counted from the first chunk's start. */
    private readonly offsets: Uint32Array,
  ) {}

  /** The strings of `packed`, a chunk made per step. */
  static *inSteps(packed: PackedText): Steps<ChunkedStrings> {
    const { joined, offsets } = packed
    const size = offsets.length - 1
    const chunks: string[] = []
    for (let from = 0; from < size; from += CHUNK) {
      if (from > 0) yield
      chunks.push(textSlice(joined, offsets[from]!, offsets[Math.min(size, from + CHUNK)]!))
    }
    return new ChunkedStrings(chunks, offsets)
  }

  /** The string at `position`. */
  at(position: number): string {
    const chunk = position >>> CHUNK_BITS
    const base = this.offsets[chunk << CHUNK_BITS]!
    return this.chunks[chunk]!.slice(this.offsets[position]! - base, this.offsets[position + 1]! - base)
  }
}
