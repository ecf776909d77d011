/**
 * A prefix of an order (the salary orders: salary_min keeps a prefix of
 * the highest-first order, salary_max one of the lowest-first order) as a
 * bitset of positions. Setting the bit of each position of a prefix costs a
 * scattered write per job (a broad salary bound keeps most of a million);
 * instead the bitsets of a few evenly spaced prefixes (checkpoints) are made
 * on first use and kept, and a prefix is its nearest checkpoint copied, with
 * the few positions between the two set or cleared: at most 1/64 of the
 * positions, plus a copy of the bitset.
 */
import type { Steps } from '../../core/steps.ts'
import { type BitsetCache, countBitsAnd } from './intersect.ts'

/** Checkpoints per order: each a bitset of size/32 words, kept once used (at most 4 MB per order at 1M jobs). */
const CHECKPOINTS = 32

export class PrefixBits {
  private readonly step: number
  private readonly kept: (Uint32Array | undefined)[] = []

  /** `bitsets`: the index's, which keeps the checkpoints (their passes need them in its arena). */
  constructor(
    private readonly order: Uint32Array,
    private readonly bitsets: BitsetCache,
  ) {
    this.step = Math.max(1, Math.ceil(order.length / CHECKPOINTS))
  }

  /** Makes `out`, a bitset of the order's size (its content is overwritten), the positions of order[0, length). */
  fill(out: Uint32Array, length: number): Uint32Array {
    const { order, step } = this
    const k = Math.min(Math.round(length / step), this.checkpoints)
    if (k === 0) {
      out.fill(0)
      setRange(out, order, 0, length)
      return out
    }
    const at = Math.min(k * step, order.length)
    out.set(this.checkpoint(k))
    if (at < length) setRange(out, order, at, length)
    else
      for (let rank = length; rank < at; rank++) {
        const p = order[rank]!
        out[p >>> 5]! &= ~(1 << (p & 31))
      }
    return out
  }

  /** Checkpoint k holds order[0, min(k * step, size)); the last one, every position. */
  get checkpoints(): number {
    return Math.ceil(this.order.length / this.step)
  }

  /** Ranks between two checkpoints. */
  get stride(): number {
    return this.step
  }

  /** How many positions of `bits` (nothing set past its first `words` words) are in checkpoint k. */
  countIn(bits: Uint32Array, k: number, words: number): number {
    return k === 0 ? 0 : countBitsAnd(bits, this.checkpoint(k), this.bitsets, words)
  }

  /**
   * Every checkpoint made now, a few per step, rather than by the queries
   * that first need them: a salary bound near the end of the order made
   * most of them at once, ~20 ms of that one query at 1M jobs.
   */
  *warmSteps(perStep = 8): Steps<void> {
    for (let k = 1; k <= this.checkpoints; k++) {
      this.checkpoint(k)
      if (k % perStep === 0) yield
    }
  }

  /** The bitset of order[0, min(k * step, size)), made from the nearest lower one kept. */
  private checkpoint(k: number): Uint32Array {
    const kept = this.kept[k]
    if (kept) return kept
    let from = k - 1
    while (from > 0 && !this.kept[from]) from--
    const bits = this.bitsets.keep()
    if (from > 0) bits.set(this.kept[from]!)
    setRange(bits, this.order, from * this.step, Math.min(k * this.step, this.order.length))
    this.kept[k] = bits
    return bits
  }
}

function setRange(bits: Uint32Array, order: Uint32Array, from: number, to: number): void {
  for (let rank = from; rank < to; rank++) {
    const p = order[rank]!
    bits[p >>> 5]! |= 1 << (p & 31)
  }
}
