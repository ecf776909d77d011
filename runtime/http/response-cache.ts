/**
 * The response cache for computed bodies (v2 filtered lists, v1 pages of
 * uncommon sizes): lru-cache bounded by bytes, entries live `ttl` seconds.
 * Keys carry the snapshot id, so a new snapshot never sees old entries.
 *
 * Bodies a computation asks `allocate` for live in a ring (body-ring.ts)
 * sized half the bound (the bound counts each body twice, for its
 * compressed copies): an entry leaves the cache when the ring needs its
 * bytes again, and whoever takes a ring-backed payload gets a `release` to
 * call once the body has been sent.
 */
import { LRUCache } from 'lru-cache'
import { BodyRing, type RingSlice } from './body-ring.ts'
import type { Payload } from './respond.ts'

/** What an entry costs beyond its body and key: the Payload object, its hash string, the LRU's slots. */
const ENTRY_OVERHEAD_BYTES = 256

interface Entry {
  payload: Payload
  /** Where the body lives when it is in the ring. */
  slice?: RingSlice
}

/** What getOrCompute answers: `release`, when given, is to be called once the body has been sent. */
export interface CacheAnswer {
  payload: Payload
  hit: boolean
  release?: () => void
}

/** A buffer of `length` bytes for a computed body, from the ring when it has room. */
export type Allocate = (length: number) => Buffer

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
      sizeCalculation: ({ payload }, key) => payload.body.length * 2 + key.length * 2 + ENTRY_OVERHEAD_BYTES,
      ttl: Math.max(1, ttlSeconds) * 1000,
    })
  }

  /**
   * The cached payload, or computes, stores and returns it. `hit` tells which.
   * A computation that makes its body with `allocate` gets room in the ring;
   * the body is then held (not written over) from the moment it is taken
   * until `release` is called.
   */
  async getOrCompute(
    key: string,
    compute: (allocate: Allocate) => Promise<Payload | undefined>,
  ): Promise<CacheAnswer | undefined> {
    const cached = this.cache.get(key)
    // Held in the same turn as it is found: nothing can write over it before the caller has it.
    if (cached) return { payload: cached.payload, hit: true, release: cached.slice?.hold() }
    let slice: RingSlice | undefined
    let release: (() => void) | undefined
    const allocate: Allocate = (length) => {
      release?.()
      const taken: RingSlice | undefined = this.ring.allocate(length, () => {
        if (this.cache.peek(key)?.slice === taken) this.cache.delete(key)
      })
      slice = taken
      release = taken?.hold()
      return taken ? taken.bytes : Buffer.allocUnsafe(length)
    }
    let payload: Payload | undefined
    try {
      payload = await compute(allocate)
    } catch (error) {
      release?.()
      throw error
    }
    if (!payload) {
      release?.()
      return undefined
    }
    // A computation may allocate and then answer with another buffer: the ring's slice is then not the body.
    if (slice && payload.body.buffer !== slice.bytes.buffer) {
      release?.()
      slice = undefined
      release = undefined
    }
    this.cache.set(key, slice ? { payload, slice } : { payload })
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
