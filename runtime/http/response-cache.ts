/**
 * The response cache for computed bodies (v2 filtered lists, v1 pages of
 * uncommon sizes): lru-cache bounded by bytes, entries live `ttl` seconds.
 * Keys carry the snapshot id, so a new snapshot never sees old entries.
 *
 * Bytes a computation asks `allocate` for (a list page, then its
 * compressed copies) live in a ring (body-ring.ts) sized half the bound
 * (the bound counts each body twice, for its compressed copies): an entry
 * leaves the cache when the ring needs any of its bytes again, and whoever
 * takes an entry gets a `release` to call once its bytes have been sent.
 */
import { LRUCache } from 'lru-cache'
import { BodyRing, type RingOwner } from './body-ring.ts'
import type { Payload } from './respond.ts'

/** What an entry costs beyond its body and key: the Payload object, its hash string, the LRU's slots. */
const ENTRY_OVERHEAD_BYTES = 256

/** What getOrCompute answers: call `release` once the payload's bytes (body or a compressed copy) have been sent. */
export interface CacheAnswer {
  payload: Payload
  hit: boolean
  release: () => void
}

/** A buffer of `length` bytes for a computed body or its compressed copy, from the ring when it has room. */
export type Allocate = (length: number) => Buffer

/** A cached payload, and the owner of its bytes in the ring. */
class Entry implements RingOwner {
  payload: Payload | undefined
  holds = 0

  constructor(
    private readonly cache: LRUCache<string, Entry>,
    private readonly key: string,
  ) {}

  /** Keeps the entry's bytes from being written over until the returned function is called (any number of times). */
  hold(): () => void {
    this.holds++
    let released = false
    return () => {
      if (released) return
      released = true
      this.holds--
    }
  }

  reuse(): void {
    if (this.cache.peek(this.key) === this) this.cache.delete(this.key)
  }
}

export class ResponseCache {
  private readonly cache: LRUCache<string, Entry>
  private readonly ring: BodyRing

  constructor(maxBytes: number, ttlSeconds: number) {
    this.ring = new BodyRing(Math.floor(maxBytes / 2))
    this.cache = new LRUCache<string, Entry>({
      maxSize: maxBytes,
      // Compressed copies are added later; counting the body twice reserves room for them. The key
      // counts too (a query string can be ~16 KB while its answer is a 60-byte empty list), at two
      // bytes a character, plus a fixed allowance for the entry's objects.
      sizeCalculation: ({ payload }, key) => payload!.body.length * 2 + key.length * 2 + ENTRY_OVERHEAD_BYTES,
      ttl: Math.max(1, ttlSeconds) * 1000,
    })
  }

  /**
   * The cached payload, or computes, stores and returns it. `hit` tells which.
   * A computation that makes its body (and its compressed copies) with
   * `allocate` gets room in the ring; those bytes are held (not written over)
   * from the moment the entry is taken until `release` is called.
   */
  async getOrCompute(
    key: string,
    compute: (allocate: Allocate) => Promise<Payload | undefined>,
  ): Promise<CacheAnswer | undefined> {
    const cached = this.cache.get(key)
    // Held in the same turn as it is found: nothing can write over it before the caller has it.
    if (cached) return { payload: cached.payload!, hit: true, release: cached.hold() }
    const entry = new Entry(this.cache, key)
    const release = entry.hold()
    const allocate: Allocate = (length) => this.ring.allocate(length, entry) ?? Buffer.allocUnsafeSlow(length)
    let payload: Payload | undefined
    try {
      payload = await compute(allocate)
    } catch (error) {
      release()
      throw error
    }
    if (!payload) {
      release()
      return undefined
    }
    entry.payload = payload
    this.cache.set(key, entry)
    return { payload, hit: false, release }
  }

  clear(): void {
    this.cache.clear()
  }

  /** Ring allocations refused because bytes still being sent were in the way (those bodies got buffers of their own). */
  get ringRefusals(): number {
    return this.ring.refused
  }

  /** What the entries count for against the bound (bodies twice, keys, overhead), bytes. */
  get bytes(): number {
    return this.cache.calculatedSize
  }
}
