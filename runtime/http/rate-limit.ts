/**
 * In-memory rate limiters. Both remember at most `maxClients` clients (an
 * LRU), so an attacker rotating addresses costs bounded memory; the price is
 * that the least recently seen client may be forgotten under such a flood.
 */
import { LRUCache } from 'lru-cache'
import { type Config, DEFAULTS, REST_WINDOW_SECONDS } from '../../core/config.ts'
import type { HeaderList } from './respond.ts'

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
  private readonly logs: LRUCache<string, TimestampQueue>

  constructor(
    readonly limit: number,
    readonly windowMs = REST_WINDOW_SECONDS * 1000,
    maxClients = DEFAULTS.JOBSNAP_MAX_CLIENTS,
  ) {
    this.logs = new LRUCache({ max: maxClients, ttl: windowMs, updateAgeOnGet: false })
  }

  hit(client: string, now = Date.now()): RateDecision {
    let log = this.logs.get(client)
    if (log === undefined) log = new TimestampQueue()
    log.dropUpTo(now - this.windowMs)
    if (log.size >= this.limit) {
      return {
        allowed: false,
        limit: this.limit,
        remaining: 0,
        resetSeconds: this.secondsUntilLeaves(log.oldest!, now),
      }
    }
    log.push(now)
    // set() also restarts the entry's TTL: a client idle for a whole window is forgotten.
    this.logs.set(client, log)
    return {
      allowed: true,
      limit: this.limit,
      remaining: this.limit - log.size,
      resetSeconds: this.secondsUntilLeaves(log.oldest!, now),
    }
  }

  /**
   * The client's state without counting a request (for CORS preflights,
   * which the limit does not count but which say where the client stands).
   * `resetSeconds` is 0 when nothing is counted in the window.
   */
  peek(client: string, now = Date.now()): RateDecision {
    const log = this.logs.peek(client)
    log?.dropUpTo(now - this.windowMs)
    const counted = log?.size ?? 0
    return {
      allowed: counted < this.limit,
      limit: this.limit,
      remaining: Math.max(0, this.limit - counted),
      resetSeconds: counted > 0 ? this.secondsUntilLeaves(log!.oldest!, now) : 0,
    }
  }

  /** Whole seconds (at least 1) until a request made at `timestamp` leaves the window. */
  private secondsUntilLeaves(timestamp: number, now: number): number {
    return Math.max(1, Math.ceil((timestamp + this.windowMs - now) / 1000))
  }

  get trackedClients(): number {
    return this.logs.size
  }
}

/**
 * Timestamps in arrival order, one entry per distinct millisecond. A raised
 * limit (as in benchmarks) can mean tens of thousands of requests a second
 * from one client, and a million-entry log per window was old-space churn
 * the collector had to walk; so repeats of a millisecond are counted, in a
 * second array made only once a repeat happens (a client within the
 * default limit costs what one plain array costs). O(1) amortised push and
 * expiry: a head index instead of shifting, compacted once the dead prefix
 * dominates.
 */
class TimestampQueue {
  private times: number[] = []
  /** Requests per entry of `times`; absent while every entry is one request. */
  private counts: number[] | undefined
  private head = 0
  /** Requests in the window (the live entries' counts summed). */
  size = 0

  get oldest(): number | undefined {
    return this.times[this.head]
  }

  push(timestamp: number): void {
    const last = this.times.length - 1
    if (last >= this.head && this.times[last] === timestamp) {
      this.counts ??= new Array<number>(this.times.length).fill(1)
      this.counts[last]!++
    } else {
      this.times.push(timestamp)
      this.counts?.push(1)
    }
    this.size++
  }

  dropUpTo(cutoff: number): void {
    while (this.head < this.times.length && this.times[this.head]! <= cutoff) {
      this.size -= this.counts ? this.counts[this.head]! : 1
      this.head++
    }
    if (this.head > 64 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head)
      this.counts = this.counts?.slice(this.head)
      this.head = 0
    }
  }
}

/**
 * Whole seconds until a bucket holding `tokens` next grows by one whole token
 * (when `remaining` next goes up, the meaning every reset figure here has, on
 * a 429 and on a 200 alike); at least 1.
 */
export function secondsUntilNextToken(tokens: number, ratePerSecond: number): number {
  return Math.max(1, Math.ceil((Math.floor(tokens) + 1 - tokens) / ratePerSecond))
}

/** What a bucket holding `tokens` says without a token taken. */
export function peekedBucket(tokens: number, burst: number, ratePerSecond: number): RateDecision {
  return {
    allowed: tokens >= 1,
    limit: burst,
    remaining: Math.floor(tokens),
    resetSeconds: tokens >= burst ? 0 : secondsUntilNextToken(tokens, ratePerSecond),
  }
}

/** Token bucket for MCP: `burst` capacity, refilled at `ratePerSecond`. */
export class TokenBucketLimiter {
  private readonly buckets: LRUCache<string, { tokens: number; at: number }>

  constructor(
    readonly burst: number,
    readonly ratePerSecond: number,
    maxClients = DEFAULTS.JOBSNAP_MAX_CLIENTS,
  ) {
    this.buckets = new LRUCache({ max: maxClients })
  }

  get limit(): number {
    return this.burst
  }

  hit(client: string, now = Date.now()): RateDecision {
    const bucket = this.buckets.get(client) ?? { tokens: this.burst, at: now }
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.ratePerSecond)
    bucket.at = now
    this.buckets.set(client, bucket)
    if (bucket.tokens < 1) {
      return {
        allowed: false,
        limit: this.burst,
        remaining: 0,
        resetSeconds: secondsUntilNextToken(bucket.tokens, this.ratePerSecond),
      }
    }
    bucket.tokens -= 1
    return {
      allowed: true,
      limit: this.burst,
      remaining: Math.floor(bucket.tokens),
      resetSeconds: secondsUntilNextToken(bucket.tokens, this.ratePerSecond),
    }
  }

  /** The client's bucket without taking a token; `resetSeconds` is 0 when it is full. */
  peek(client: string, now = Date.now()): RateDecision {
    const bucket = this.buckets.peek(client)
    const tokens = bucket
      ? Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.ratePerSecond)
      : this.burst
    return peekedBucket(tokens, this.burst, this.ratePerSecond)
  }
}

/** The REST and MCP limiters as configured: one pair per server, or one per cluster in its primary. */
export function limitersFor(config: Config): { rest: SlidingWindowLimiter; mcp: TokenBucketLimiter } {
  return {
    rest: new SlidingWindowLimiter(config.JOBSNAP_REST_LIMIT, REST_WINDOW_SECONDS * 1000, config.JOBSNAP_MAX_CLIENTS),
    mcp: new TokenBucketLimiter(config.JOBSNAP_MCP_BURST, config.JOBSNAP_MCP_RATE, config.JOBSNAP_MAX_CLIENTS),
  }
}

/** X-RateLimit-* and the IETF RateLimit fields for one decision. */
export function rateLimitHeaders(policy: 'rest' | 'mcp', decision: RateDecision, windowSeconds: number): HeaderList {
  // The limit and the policy are the same answer after answer: their pairs are made once per policy and limit.
  let fixed = fixedPairs[policy]
  if (fixed === undefined || fixed.limit !== decision.limit || fixed.windowSeconds !== windowSeconds) {
    fixed = {
      limit: decision.limit,
      windowSeconds,
      limitPair: ['x-ratelimit-limit', String(decision.limit)],
      policyPair: ['ratelimit-policy', `"${policy}";q=${decision.limit};w=${windowSeconds}`],
    }
    fixedPairs[policy] = fixed
  }
  return [
    fixed.limitPair,
    ['x-ratelimit-remaining', String(decision.remaining)],
    ['x-ratelimit-reset', String(decision.resetSeconds)],
    fixed.policyPair,
    ['ratelimit', `"${policy}";r=${decision.remaining};t=${decision.resetSeconds}`],
  ]
}

const fixedPairs: Partial<
  Record<
    'rest' | 'mcp',
    { limit: number; windowSeconds: number; limitPair: [string, string]; policyPair: [string, string] }
  >
> = {}
