/**
 * The response cache for computed bodies (v2 filtered lists, v1 pages of
 * uncommon sizes): lru-cache bounded by bytes, entries live `ttl` seconds.
 * Keys carry the snapshot id, so a new snapshot never sees old entries.
 */
import { LRUCache } from 'lru-cache'
import type { Payload } from './respond.ts'

/** What an entry costs beyond its body and key: the Payload object, its hash string, the LRU's slots. */
const ENTRY_OVERHEAD_BYTES = 256

export class ResponseCache {
  private readonly cache: LRUCache<string, Payload>

  constructor(maxBytes: number, ttlSeconds: number) {
    this.cache = new LRUCache<string, Payload>({
      maxSize: maxBytes,
      // Compressed copies are added later; counting the body twice reserves room for them. The key
      // counts too (a query string can be ~16 KB while its answer is a 60-byte empty list), at two
      // bytes a character, plus a fixed allowance for the entry's objects.
      sizeCalculation: (payload, key) => payload.body.length * 2 + key.length * 2 + ENTRY_OVERHEAD_BYTES,
      ttl: Math.max(1, ttlSeconds) * 1000,
    })
  }

  /** The cached payload, or computes, stores and returns it. `hit` tells which. */
  async getOrCompute(
    key: string,
    compute: () => Promise<Payload | undefined>,
  ): Promise<{ payload: Payload; hit: boolean } | undefined> {
    const cached = this.cache.get(key)
    if (cached) return { payload: cached, hit: true }
    const payload = await compute()
    if (payload) this.cache.set(key, payload)
    return payload ? { payload, hit: false } : undefined
  }

  clear(): void {
    this.cache.clear()
  }

  /** What the entries count for against the bound (bodies twice, keys, overhead), bytes. */
  get bytes(): number {
    return this.cache.calculatedSize
  }
}
