/**
 * In-memory rate limiters. Both remember at most `maxClients` clients (an
 * LRU), so an attacker rotating addresses costs bounded memory; the price is
 * that the least recently seen client may be forgotten under such a flood.
 */
import { LRUCache } from 'lru-cache'

export interface RateDecision {
  allowed: boolean
  limit: number
  remaining: number
  /** Whole seconds until capacity next goes up (>= 1 when refused). */
  resetSeconds: number
}

/**
 * Sliding-log limiter for REST: at most `limit` requests in any rolling
 * `windowMs`. Refused requests are not logged, so a client hammering through
 * a 429 does not push its own reset further away.
 */
export class SlidingWindowLimiter {
  private readonly logs: LRUCache<string, number[]>

  constructor(
    readonly limit: number,
    readonly windowMs = 60_000,
    maxClients = 100_000,
  ) {
    this.logs = new LRUCache({ max: maxClients, ttl: windowMs, ttlAutopurge: false, updateAgeOnGet: false })
  }

  hit(client: string, now = Date.now()): RateDecision {
    let log = this.logs.get(client)
    if (log === undefined) {
      log = []
    }
    const windowStart = now - this.windowMs
    let expired = 0
    while (expired < log.length && log[expired]! <= windowStart) expired++
    if (expired > 0) log.splice(0, expired)
    const reset = (oldest: number) => Math.max(1, Math.ceil((oldest + this.windowMs - now) / 1000))
    if (log.length >= this.limit) {
      return { allowed: false, limit: this.limit, remaining: 0, resetSeconds: reset(log[0]!) }
    }
    log.push(now)
    this.logs.set(client, log)
    return { allowed: true, limit: this.limit, remaining: this.limit - log.length, resetSeconds: reset(log[0]!) }
  }

  get trackedClients(): number {
    return this.logs.size
  }
}

/** Token bucket for MCP: `burst` capacity, refilled at `ratePerSecond`. */
export class TokenBucketLimiter {
  private readonly buckets: LRUCache<string, { tokens: number; at: number }>

  constructor(
    readonly burst: number,
    readonly ratePerSecond: number,
    maxClients = 100_000,
  ) {
    this.buckets = new LRUCache({ max: maxClients })
  }

  hit(client: string, now = Date.now()): RateDecision {
    const bucket = this.buckets.get(client) ?? { tokens: this.burst, at: now }
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.ratePerSecond)
    bucket.at = now
    this.buckets.set(client, bucket)
    if (bucket.tokens < 1) {
      return { allowed: false, limit: this.burst, remaining: 0, resetSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.ratePerSecond)) }
    }
    bucket.tokens -= 1
    const toFull = (this.burst - bucket.tokens) / this.ratePerSecond
    return { allowed: true, limit: this.burst, remaining: Math.floor(bucket.tokens), resetSeconds: Math.max(1, Math.ceil(toFull)) }
  }
}

/** X-RateLimit-* and the IETF RateLimit fields for one decision. */
export function rateLimitHeaders(policy: 'rest' | 'mcp', decision: RateDecision, windowSeconds: number): Record<string, string> {
  return {
    'x-ratelimit-limit': String(decision.limit),
    'x-ratelimit-remaining': String(decision.remaining),
    'x-ratelimit-reset': String(decision.resetSeconds),
    'ratelimit-policy': `"${policy}";q=${decision.limit};w=${windowSeconds}`,
    ratelimit: `"${policy}";r=${decision.remaining};t=${decision.resetSeconds}`,
  }
}
