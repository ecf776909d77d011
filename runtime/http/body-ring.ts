/**
 * One preallocated ring of memory for the bodies of computed v2 list pages.
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
 * oldest. Before bytes are written over, the slice that held them is told
 * (the response cache drops its entry). Bytes still held (a response being
 * sent, a compression reading them) are never written over: the allocation
 * that would need them gets undefined instead, and its caller a buffer of
 * its own, as if there were no ring.
 */

export class RingSlice {
  /** Holds not yet released: while above 0, the bytes are not written over. */
  holds = 0

  constructor(
    /** The slice's bytes: a view into the ring. */
    readonly bytes: Buffer,
    readonly start: number,
    readonly end: number,
    private readonly onReuse: () => void,
  ) {}

  /** Keeps the bytes from being written over until the returned function is called (any number of times). */
  hold(): () => void {
    this.holds++
    let released = false
    return () => {
      if (released) return
      released = true
      this.holds--
    }
  }

  /** @internal Called by the ring just before it writes over these bytes. */
  reuse(): void {
    this.onReuse()
  }
}

export class BodyRing {
  private bytes: Buffer | undefined
  /** Where the next body goes. */
  private head = 0
  /** Live slices, oldest first, from index `first` on (a queue that is compacted now and then). */
  private slices: RingSlice[] = []
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
   * `length` bytes in the ring (their contents are whatever was there), or
   * undefined when the body is too large for it or held bytes are in the way.
   * `onReuse` is called just before the bytes are written over.
   */
  allocate(length: number, onReuse: () => void): RingSlice | undefined {
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
      if (oldest.holds > 0) {
        this.refused++
        return undefined
      }
      this.first++
      oldest.reuse()
    }
    if (this.first > 1024 && this.first * 2 > this.slices.length) {
      this.slices = this.slices.slice(this.first)
      this.first = 0
    }
    const slice = new RingSlice(this.bytes.subarray(start, end), start, end, onReuse)
    this.slices.push(slice)
    this.head = end
    return slice
  }
}
