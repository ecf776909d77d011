/**
 * One preallocated ring of memory for the bodies of computed v2 list pages
 * and their compressed copies.
 *
 * Why: a page in a buffer of its own is an ArrayBuffer outside V8's heap,
 * and V8 collects when those bytes grow, whatever the JS heap holds. At 100k
 * jobs the uncached mix makes ~150 MB/s of pages: a scavenge every ~50 ms and
 * a full mark-compact about every half second ("external memory pressure" in
 * --trace-gc), pauses of 7-20 ms that every queued request waits through.
 * Written into one ring the pages add no external memory after the first
 * lap, and the collector runs when the JS heap asks for it.
 *
 * The ring is first in, first out: a body goes after the newest one, and
 * when it would run past the end it starts again at the front, over the
 * oldest. Each slice belongs to an owner (a response cache entry, which may
 * have a slice for its body and one per compressed copy). Before bytes are
 * written over, their owner is told (the cache drops the entry). Bytes whose
 * owner is held (a response being sent, a compression reading them) are
 * never written over: the allocation that would need them gets undefined
 * instead, and its caller a buffer of its own, as if there were no ring.
 */

/** Who a slice's bytes belong to. */
export interface RingOwner {
  /** Holds not yet released: while above 0, none of the owner's slices is written over. */
  holds: number
  /** Called just before one of the owner's slices is written over. */
  reuse(): void
}

interface Slice {
  start: number
  end: number
  owner: RingOwner
}

export class BodyRing {
  private bytes: Buffer | undefined
  /** Where the next body goes. */
  private head = 0
  /** Live slices, oldest first, from index `first` on (a queue that is compacted now and then). */
  private slices: Slice[] = []
  private first = 0
  /** Allocations refused because held bytes were in the way (the caller used a buffer of its own). */
  refused = 0

  /**
   * @param capacity Bytes of the ring, allocated on first use.
   * @param largestShare Bodies above capacity / largestShare get no slice: one
   *   body must not wipe out most of the ring.
   */
  constructor(
    readonly capacity: number,
    private readonly largestShare = 4,
  ) {}

  /**
   * `length` bytes in the ring for `owner` (their contents are whatever was
   * there), or undefined when the body is too large for it or held bytes are
   * in the way.
   */
  allocate(length: number, owner: RingOwner): Buffer | undefined {
    if (length === 0 || length > this.capacity / this.largestShare) return undefined
    this.bytes ??= Buffer.allocUnsafeSlow(this.capacity)
    const wraps = this.head + length > this.capacity
    const start = wraps ? 0 : this.head
    const end = start + length
    // The slices in the way are the oldest ones: when wrapping, the end of the last lap (from the head
    // on, left unused), then those under [start, end).
    while (this.first < this.slices.length) {
      const oldest = this.slices[this.first]!
      const inTheWay = (wraps && oldest.start >= this.head) || (oldest.start < end && oldest.end > start)
      if (!inTheWay) break
      if (oldest.owner.holds > 0) {
        this.refused++
        return undefined
      }
      this.first++
      oldest.owner.reuse()
    }
    if (this.first > 1024 && this.first * 2 > this.slices.length) {
      this.slices = this.slices.slice(this.first)
      this.first = 0
    }
    this.slices.push({ start, end, owner })
    this.head = end
    return this.bytes.subarray(start, end)
  }
}
