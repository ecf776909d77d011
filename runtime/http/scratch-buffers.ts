/**
 * Reusable buffers for bodies read per request and sent as they are (v1
 * pages, ~47 KB each at limit 25). A buffer of its own per page is an
 * ArrayBuffer outside V8's heap: at tens of thousands of pages a second
 * that is GB/s of external memory, and V8 collects whenever it grows
 * (see body-ring.ts for the same problem with list pages). A body taken
 * from here goes back once its response has been sent.
 *
 * Buffers come in power-of-two sizes from 64 KiB; each size keeps at most
 * `maxFree` buffers between uses, so the pool holds what the busiest moment
 * had in flight, bounded.
 */

/** A reusable buffer; `release` (made once per buffer, not per use) gives it back. */
export interface Scratch {
  readonly bytes: Buffer
  readonly release: () => void
}

const SMALLEST_BYTES = 64 << 10

export class ScratchBuffers {
  private readonly free = new Map<number, Scratch[]>()

  constructor(private readonly maxFree = 32) {}

  /** A buffer of at least `length` bytes (contents undefined) until its `release` is called. */
  take(length: number): Scratch {
    let size = SMALLEST_BYTES
    while (size < length) size *= 2
    let list = this.free.get(size)
    if (!list) {
      list = []
      this.free.set(size, list)
    }
    const reused = list.pop()
    if (reused) {
      ;(reused as { inUse: boolean } & Scratch).inUse = true
      return reused
    }
    const scratch = { bytes: Buffer.allocUnsafeSlow(size), inUse: true, release: () => {} }
    const pool = list
    scratch.release = () => {
      // A second call (before the buffer is taken again) must not put the same bytes in the pool twice.
      if (!scratch.inUse) return
      scratch.inUse = false
      if (pool.length < this.maxFree) pool.push(scratch)
    }
    return scratch
  }

  /** Bytes kept between uses (a gauge for tests and metrics). */
  get freeBytes(): number {
    let bytes = 0
    for (const [size, list] of this.free) bytes += size * list.length
    return bytes
  }
}
